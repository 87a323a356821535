/**
 * A hand-written reader of protobuf ExportTraceServiceRequest bodies (OTLP/HTTP), decoding them
 * straight into DecodedSpan objects in one pass. It exists for ingestion speed: protobufjs built a
 * message object for every span, attribute and value, walked again afterwards (~6 ms per 512 spans).
 *
 * It reads the fields the former protobufjs definitions read (field numbers of opentelemetry-proto)
 * and returns what that path returned, with protobuf semantics:
 * - unknown fields, and known field numbers arriving with another wire type, are skipped;
 * - fields come in any order; a repeated scalar field keeps its last value; a repeated message
 *   field is merged: a second `resource` adds attributes, a second `status` without a code keeps the
 *   code, a second AnyValue `value` without a member keeps the member;
 * - strings must be valid UTF-8, also the ones not kept (Status.message, nested values), as in
 *   protobufjs; array, kvlist and bytes values are read through (and validated) but map to null.
 * Stricter than protobufjs: groups (wire types 3 and 4) and varints over 10 bytes are rejected.
 * Malformed input throws OtlpDecodeError, never another error; nesting is limited to 100 messages.
 *
 * Where the time goes, per span: a Map and its sets, two hex ids, two bigints, strings. Two memos
 * spare most of the strings and attribute decoding (see readSpanAttribute and decodeUtf8).
 */
import { OtlpDecodeError, tooManySpans, type AttrValue, type Attributes, type DecodedSpan } from './otlp-types.ts';

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

function tag(field: number, wireType: number): number {
  return (field << 3) | wireType;
}

const REQUEST_RESOURCE_SPANS = tag(1, LEN);
const RESOURCE_SPANS_RESOURCE = tag(1, LEN);
const RESOURCE_SPANS_SCOPE_SPANS = tag(2, LEN);
const RESOURCE_ATTRIBUTES = tag(1, LEN);
const SCOPE_SPANS_SPANS = tag(2, LEN);
// Span fields not listed (trace_state, kind, dropped counts, events, links, flags) are skipped.
const SPAN_TRACE_ID = tag(1, LEN);
const SPAN_SPAN_ID = tag(2, LEN);
const SPAN_PARENT_SPAN_ID = tag(4, LEN);
const SPAN_NAME = tag(5, LEN);
const SPAN_START_TIME = tag(7, I64);
const SPAN_END_TIME = tag(8, I64);
const SPAN_ATTRIBUTES = tag(9, LEN);
const SPAN_STATUS = tag(15, LEN);
const STATUS_MESSAGE = tag(2, LEN);
const STATUS_CODE = tag(3, VARINT);
const KEY_VALUE_KEY = tag(1, LEN);
const KEY_VALUE_VALUE = tag(2, LEN);
/** ArrayValue.values and KeyValueList.values. */
const LIST_VALUES = tag(1, LEN);
const ANY_STRING = tag(1, LEN);
const ANY_BOOL = tag(2, VARINT);
const ANY_INT = tag(3, VARINT);
const ANY_DOUBLE = tag(4, I64);
const ANY_ARRAY = tag(5, LEN);
const ANY_KVLIST = tag(6, LEN);
const ANY_BYTES = tag(7, LEN);

/** Message depths as protobufjs counts them (the request is 0); deeper ones are rejected, as there. */
const MAX_DEPTH = 100;
const RESOURCE_KEY_VALUE_DEPTH = 3;
const SPAN_KEY_VALUE_DEPTH = 4;

/**
 * What an AnyValue with no member set reads as: protobufjs gave '' (the default of string_value,
 * its first member), kept so that the output does not change. A KeyValue with no value gives null.
 */
const NO_MEMBER = '';

/**
 * Buffer's own string-making methods behind toString (on Buffer.prototype, undocumented; protobufjs
 * calls utf8Slice the same way), called directly to skip toString's argument handling.
 */
interface BufferSlices {
  latin1Slice(start: number, end: number): string;
  hexSlice(start: number, end: number): string;
}

/** A decoded span attribute and the bytes it was decoded from (see readSpanAttribute). */
interface AttributeMemo {
  start: number;
  end: number;
  key: string;
  value: AttrValue;
}

/** The body and a read position; every read is bounded by the end of the enclosing message. */
class WireReader {
  readonly buf: Buffer & BufferSlices;
  readonly view: DataView;
  pos = 0;
  /** Bits 32-63 of the last varint read, as a signed 32-bit number. */
  hi = 0;
  /** The last KeyValue read. */
  key = '';
  value: AttrValue = null;
  /** The last span attribute decoded at each attribute position. */
  readonly attributeMemos: (AttributeMemo | undefined)[] = [];
  readonly maxSpans: number;

  constructor(body: Uint8Array, maxSpans: number) {
    this.maxSpans = maxSpans;
    const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    this.buf = buf as Buffer & BufferSlices;
    this.view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  }
}

function fail(r: WireReader, problem: string): never {
  throw new OtlpDecodeError(`the body is not a protobuf ExportTraceServiceRequest: ${problem} at byte ${r.pos}`);
}

/** Decodes an ExportTraceServiceRequest body into its spans, in body order; more than `maxSpans` fails. */
export function decodeExportRequestProto(body: Uint8Array, maxSpans = Number.POSITIVE_INFINITY): DecodedSpan[] {
  const r = new WireReader(body, maxSpans);
  const spans: DecodedSpan[] = [];
  const end = body.length;
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === REQUEST_RESOURCE_SPANS) readResourceSpans(r, readLimit(r, end), spans);
    else skipField(r, t, end);
  }
  return spans;
}

/** The spans of a ResourceSpans share one resource Map, filled wherever its `resource` fields come. */
function readResourceSpans(r: WireReader, end: number, spans: DecodedSpan[]): void {
  const resource: Attributes = new Map();
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === RESOURCE_SPANS_RESOURCE) readResource(r, readLimit(r, end), resource);
    else if (t === RESOURCE_SPANS_SCOPE_SPANS) readScopeSpans(r, readLimit(r, end), resource, spans);
    else skipField(r, t, end);
  }
}

function readResource(r: WireReader, end: number, resource: Attributes): void {
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === RESOURCE_ATTRIBUTES) {
      readKeyValue(r, readLimit(r, end), RESOURCE_KEY_VALUE_DEPTH);
      resource.set(r.key, r.value);
    } else {
      skipField(r, t, end);
    }
  }
}

function readScopeSpans(r: WireReader, end: number, resource: Attributes, spans: DecodedSpan[]): void {
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === SCOPE_SPANS_SPANS) {
      if (spans.length >= r.maxSpans) throw tooManySpans(r.maxSpans);
      spans.push(readSpan(r, readLimit(r, end), resource));
    }
    else skipField(r, t, end);
  }
}

function readSpan(r: WireReader, end: number, resource: Attributes): DecodedSpan {
  let traceId = '';
  let spanId = '';
  let parentSpanId = '';
  let name = '';
  let startNs = 0n;
  let endNs = 0n;
  let statusCode = 0;
  const attributes: Attributes = new Map();
  let attributeIndex = 0;
  while (r.pos < end) {
    const t = readTag(r, end);
    switch (t) {
      case SPAN_TRACE_ID: traceId = readHex(r, end); break;
      case SPAN_SPAN_ID: spanId = readHex(r, end); break;
      case SPAN_PARENT_SPAN_ID: parentSpanId = readHex(r, end); break;
      case SPAN_NAME: name = readString(r, end); break;
      case SPAN_START_TIME: startNs = readFixed64(r, end); break;
      case SPAN_END_TIME: endNs = readFixed64(r, end); break;
      case SPAN_ATTRIBUTES: readSpanAttribute(r, readLimit(r, end), attributes, attributeIndex++); break;
      case SPAN_STATUS: statusCode = readStatusCode(r, readLimit(r, end), statusCode); break;
      default: skipField(r, t, end);
    }
  }
  return { traceId, spanId, parentSpanId: parentSpanId || null, name, startNs, endNs, statusCode, attributes, resource };
}

/** Status.code (int32), starting from the code of an earlier `status` of the same span. */
function readStatusCode(r: WireReader, end: number, code: number): number {
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === STATUS_CODE) code = readVarint(r, end) | 0;
    else if (t === STATUS_MESSAGE) readString(r, end); // validated like every string, not kept
    else skipField(r, t, end);
  }
  return code;
}

/**
 * Spans of a batch mostly repeat their attributes, in the same order: an attribute whose bytes equal
 * those of the attribute last decoded at the same position takes its key and value (decoding depends
 * on the bytes only) instead of decoding them again. A later key overwrites an earlier one, as Map.set.
 */
function readSpanAttribute(r: WireReader, end: number, attributes: Attributes, index: number): void {
  const start = r.pos;
  let memo = r.attributeMemos[index];
  if (memo !== undefined && sameBytes(r.view, memo.start, memo.end, start, end)) {
    r.pos = end;
  } else {
    readKeyValue(r, end, SPAN_KEY_VALUE_DEPTH);
    memo = { start, end, key: r.key, value: r.value };
    r.attributeMemos[index] = memo;
  }
  attributes.set(memo.key, memo.value);
}

/** Whether two ranges of the body hold the same bytes (compared four at a time). */
function sameBytes(view: DataView, aStart: number, aEnd: number, bStart: number, bEnd: number): boolean {
  const length = aEnd - aStart;
  if (length !== bEnd - bStart) return false;
  let i = 0;
  for (; i + 4 <= length; i += 4) if (view.getUint32(aStart + i) !== view.getUint32(bStart + i)) return false;
  for (; i < length; i++) if (view.getUint8(aStart + i) !== view.getUint8(bStart + i)) return false;
  return true;
}

/** Reads a KeyValue into r.key and r.value. */
function readKeyValue(r: WireReader, end: number, depth: number): void {
  checkDepth(r, depth);
  let key = '';
  let value: AttrValue = null;
  let hasValue = false;
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === KEY_VALUE_KEY) {
      key = readString(r, end);
    } else if (t === KEY_VALUE_VALUE) {
      value = readAnyValue(r, readLimit(r, end), hasValue ? value : NO_MEMBER, depth + 1);
      hasValue = true;
    } else {
      skipField(r, t, end);
    }
  }
  r.key = key;
  r.value = value;
}

/** An AnyValue merged into `merged`: the last member set wins; none set leaves `merged`. */
function readAnyValue(r: WireReader, end: number, merged: AttrValue, depth: number): AttrValue {
  checkDepth(r, depth);
  let value = merged;
  while (r.pos < end) {
    const t = readTag(r, end);
    switch (t) {
      case ANY_STRING: value = readString(r, end); break;
      case ANY_BOOL: value = readBool(r, end); break;
      case ANY_INT: value = readInt64(r, end); break;
      case ANY_DOUBLE: value = readFiniteDouble(r, end); break;
      case ANY_ARRAY: readArrayValue(r, readLimit(r, end), depth + 1); value = null; break;
      case ANY_KVLIST: readKeyValueList(r, readLimit(r, end), depth + 1); value = null; break;
      case ANY_BYTES: r.pos = readLimit(r, end); value = null; break;
      default: skipField(r, t, end);
    }
  }
  return value;
}

function readArrayValue(r: WireReader, end: number, depth: number): void {
  checkDepth(r, depth);
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === LIST_VALUES) readAnyValue(r, readLimit(r, end), NO_MEMBER, depth + 1);
    else skipField(r, t, end);
  }
}

function readKeyValueList(r: WireReader, end: number, depth: number): void {
  checkDepth(r, depth);
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === LIST_VALUES) readKeyValue(r, readLimit(r, end), depth + 1);
    else skipField(r, t, end);
  }
}

function checkDepth(r: WireReader, depth: number): void {
  if (depth > MAX_DEPTH) fail(r, `messages nested deeper than ${MAX_DEPTH}`);
}

// ---- wire primitives ----

function readTag(r: WireReader, end: number): number {
  const t = readVarint32(r, end, 0x0f);
  if (t < 8) fail(r, 'field number 0');
  return t;
}

/** Reads a length prefix and returns where the length-delimited payload ends. */
function readLimit(r: WireReader, end: number): number {
  const length = readVarint32(r, end, 0x07);
  if (length > end - r.pos) fail(r, 'a length past the end of its message');
  return r.pos + length;
}

/**
 * A varint of at most 5 bytes, as protobufjs reads tags (below 2^32: fifth byte at most 0x0f) and
 * lengths (below 2^31: fifth byte at most 0x07).
 */
function readVarint32(r: WireReader, end: number, fifthByteMax: number): number {
  const buf = r.buf;
  let pos = r.pos;
  let value = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (pos >= end) fail(r, 'a truncated varint');
    const b = buf[pos++];
    value |= (b & 0x7f) << shift;
    if (b < 0x80) {
      r.pos = pos;
      return value;
    }
  }
  if (pos >= end) fail(r, 'a truncated varint');
  const b = buf[pos++];
  if (b > fifthByteMax) fail(r, 'an oversized tag or length');
  r.pos = pos;
  return (value | (b << 28)) >>> 0;
}

/** A varint of up to 10 bytes: returns bits 0-31 (unsigned) and leaves bits 32-63 in r.hi. */
function readVarint(r: WireReader, end: number): number {
  const buf = r.buf;
  let pos = r.pos;
  let lo = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (pos >= end) fail(r, 'a truncated varint');
    const b = buf[pos++];
    lo |= (b & 0x7f) << shift;
    if (b < 0x80) {
      r.pos = pos;
      r.hi = 0;
      return lo >>> 0;
    }
  }
  // The fifth byte straddles the halves; bytes six to ten fill the high half (bits past 63 drop).
  if (pos >= end) fail(r, 'a truncated varint');
  let b = buf[pos++];
  lo |= (b & 0x7f) << 28;
  let hi = (b & 0x7f) >> 4;
  for (let shift = 3; b >= 0x80; shift += 7) {
    if (shift > 31) fail(r, 'a varint longer than 10 bytes');
    if (pos >= end) fail(r, 'a truncated varint');
    b = buf[pos++];
    hi |= (b & 0x7f) << shift;
  }
  r.pos = pos;
  r.hi = hi;
  return lo >>> 0;
}

/** Moves past `length` bytes of the current message; returns where they start. */
function take(r: WireReader, length: number, end: number): number {
  const start = r.pos;
  if (end - start < length) fail(r, 'a truncated fixed-size field');
  r.pos = start + length;
  return start;
}

function skipField(r: WireReader, t: number, end: number): void {
  switch (t & 7) {
    case VARINT: readVarint(r, end); return;
    case I64: take(r, 8, end); return;
    case LEN: r.pos = readLimit(r, end); return;
    case I32: take(r, 4, end); return;
    default: fail(r, `unsupported wire type ${t & 7}`);
  }
}

function readFixed64(r: WireReader, end: number): bigint {
  return r.view.getBigUint64(take(r, 8, end), true);
}

/** A double, null when NaN or infinite (as the protobufjs path mapped them). */
function readFiniteDouble(r: WireReader, end: number): number | null {
  const d = r.view.getFloat64(take(r, 8, end), true);
  return Number.isFinite(d) ? d : null;
}

function readBool(r: WireReader, end: number): boolean {
  return (readVarint(r, end) | r.hi) !== 0;
}

/** An int64 as the nearest Number (exact within ±2^53). */
function readInt64(r: WireReader, end: number): number {
  const lo = readVarint(r, end);
  return r.hi * 0x1_0000_0000 + lo;
}

/** A bytes field as lowercase hex ('' when empty). */
function readHex(r: WireReader, end: number): string {
  const stop = readLimit(r, end);
  const start = r.pos;
  r.pos = stop;
  return start === stop ? '' : r.buf.hexSlice(start, stop);
}

function readString(r: WireReader, end: number): string {
  const stop = readLimit(r, end);
  const start = r.pos;
  r.pos = stop;
  return decodeUtf8(r, start, stop);
}

// ---- strings ----

/** As protobufjs decoded strings: invalid UTF-8 is an error, a leading BOM is kept. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Short ASCII strings recur across spans and requests (attribute keys and most values), and making a
 * string costs ~130 ns: a direct-mapped cache, keyed on the length and three of the bytes, hands back
 * the earlier string when its bytes (kept alongside) are the same. Only ASCII strings are cached, so
 * that equal bytes mean equal strings. Bounded: CACHE_SLOTS strings of at most CACHED_MAX_BYTES bytes.
 */
const CACHE_BITS = 10;
const CACHE_SLOTS = 1 << CACHE_BITS;
const CACHED_MAX_BYTES = 64;
const cachedStrings: string[] = new Array<string>(CACHE_SLOTS).fill('');
const cachedBytes = new Uint8Array(CACHE_SLOTS * CACHED_MAX_BYTES);
const cachedBytesView = new DataView(cachedBytes.buffer);

function decodeUtf8(r: WireReader, start: number, end: number): string {
  const length = end - start;
  if (length === 0) return '';
  if (length > CACHED_MAX_BYTES) return decodeStrict(r, start, end);
  const buf = r.buf;
  const key = (length << 24) ^ (buf[start] << 16) ^ (buf[start + (length >> 1)] << 8) ^ buf[end - 1];
  const slot = Math.imul(key, 0x9e3779b1) >>> (32 - CACHE_BITS);
  const at = slot * CACHED_MAX_BYTES;
  const cached = cachedStrings[slot];
  if (cached.length === length && equalsCachedBytes(r.view, start, length, at)) return cached;
  if (!isAscii(buf, start, end)) return decodeStrict(r, start, end);
  const decoded = buf.latin1Slice(start, end);
  cachedStrings[slot] = decoded;
  for (let i = 0; i < length; i++) cachedBytes[at + i] = buf[start + i];
  return decoded;
}

function equalsCachedBytes(view: DataView, start: number, length: number, at: number): boolean {
  let i = 0;
  for (; i + 4 <= length; i += 4) if (view.getUint32(start + i) !== cachedBytesView.getUint32(at + i)) return false;
  for (; i < length; i++) if (view.getUint8(start + i) !== cachedBytes[at + i]) return false;
  return true;
}

function isAscii(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i] >= 0x80) return false;
  return true;
}

function decodeStrict(r: WireReader, start: number, end: number): string {
  try {
    return strictUtf8.decode(r.buf.subarray(start, end));
  } catch {
    return fail(r, 'invalid UTF-8 in a string');
  }
}
