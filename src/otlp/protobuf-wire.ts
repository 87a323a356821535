/**
 * Protobuf wire primitives for the hand-written OTLP reader (otlp/traces/proto-reader.ts): tags, varints,
 * length-delimited payloads, fixed-size fields and strictly validated UTF-8 strings. Every read is
 * bounded by the end of its enclosing message and failures throw OtlpDecodeError via `fail`.
 *
 * Indexing a Buffer at a position already checked against `end` cannot give undefined; the `?? 0`
 * after such reads only satisfies the type checker (noUncheckedIndexedAccess).
 */
import { OtlpDecodeError } from './types.ts';

export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
const I32 = 5;

export function tag(field: number, wireType: number): number {
  return (field << 3) | wireType;
}

/**
 * Buffer's own string-making methods behind toString (on Buffer.prototype, undocumented; protobufjs
 * calls utf8Slice the same way), called directly to skip toString's argument handling.
 */
interface BufferSlices {
  latin1Slice(start: number, end: number): string;
  hexSlice(start: number, end: number): string;
}

/** The body and a read position; every read is bounded by the end of the enclosing message. */
export class WireReader {
  readonly buf: Buffer & BufferSlices;
  readonly view: DataView;
  pos = 0;
  /** Bits 32-63 of the last varint read, as a signed 32-bit number. */
  hi = 0;
  /** What the body should be, for error messages. */
  readonly message: string;

  constructor(body: Uint8Array, message: string) {
    this.message = message;
    const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    this.buf = buf as Buffer & BufferSlices;
    this.view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  }
}

export function fail(r: WireReader, problem: string): never {
  throw new OtlpDecodeError(`the body is not a ${r.message}: ${problem} at byte ${r.pos}`);
}

export function readTag(r: WireReader, end: number): number {
  const t = readVarint32(r, end, 0x0f);
  if (t < 8) fail(r, 'field number 0');
  return t;
}

/** Reads a length prefix and returns where the length-delimited payload ends. */
export function readLimit(r: WireReader, end: number): number {
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
    const b = buf[pos++] ?? 0;
    value |= (b & 0x7f) << shift;
    if (b < 0x80) {
      r.pos = pos;
      return value;
    }
  }
  if (pos >= end) fail(r, 'a truncated varint');
  const b = buf[pos++] ?? 0;
  if (b > fifthByteMax) fail(r, 'an oversized tag or length');
  r.pos = pos;
  return (value | (b << 28)) >>> 0;
}

/** A varint of up to 10 bytes: returns bits 0-31 (unsigned) and leaves bits 32-63 in r.hi. */
export function readVarint(r: WireReader, end: number): number {
  const buf = r.buf;
  let pos = r.pos;
  let lo = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (pos >= end) fail(r, 'a truncated varint');
    const b = buf[pos++] ?? 0;
    lo |= (b & 0x7f) << shift;
    if (b < 0x80) {
      r.pos = pos;
      r.hi = 0;
      return lo >>> 0;
    }
  }
  // The fifth byte straddles the halves; bytes six to ten fill the high half (bits past 63 drop).
  if (pos >= end) fail(r, 'a truncated varint');
  let b = buf[pos++] ?? 0;
  lo |= (b & 0x7f) << 28;
  let hi = (b & 0x7f) >> 4;
  for (let shift = 3; b >= 0x80; shift += 7) {
    if (shift > 31) fail(r, 'a varint longer than 10 bytes');
    if (pos >= end) fail(r, 'a truncated varint');
    b = buf[pos++] ?? 0;
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

export function skipField(r: WireReader, t: number, end: number): void {
  switch (t & 7) {
    case VARINT:
      readVarint(r, end);
      return;
    case I64:
      take(r, 8, end);
      return;
    case LEN:
      r.pos = readLimit(r, end);
      return;
    case I32:
      take(r, 4, end);
      return;
    default:
      fail(r, `unsupported wire type ${t & 7}`);
  }
}

export function readFixed64(r: WireReader, end: number): bigint {
  return r.view.getBigUint64(take(r, 8, end), true);
}

/** A double, null when NaN or infinite (as the protobufjs path mapped them). */
export function readFiniteDouble(r: WireReader, end: number): number | null {
  const d = r.view.getFloat64(take(r, 8, end), true);
  return Number.isFinite(d) ? d : null;
}

export function readBool(r: WireReader, end: number): boolean {
  return (readVarint(r, end) | r.hi) !== 0;
}

/** An int64 as the nearest Number (exact within ±2^53). */
export function readInt64(r: WireReader, end: number): number {
  const lo = readVarint(r, end);
  return r.hi * 0x1_0000_0000 + lo;
}

/** A bytes field as lowercase hex ('' when empty). */
export function readHex(r: WireReader, end: number): string {
  const stop = readLimit(r, end);
  const start = r.pos;
  r.pos = stop;
  return start === stop ? '' : r.buf.hexSlice(start, stop);
}

export function readString(r: WireReader, end: number): string {
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
  const key =
    (length << 24) ^ ((buf[start] ?? 0) << 16) ^ ((buf[start + (length >> 1)] ?? 0) << 8) ^ (buf[end - 1] ?? 0);
  const slot = Math.imul(key, 0x9e3779b1) >>> (32 - CACHE_BITS);
  const at = slot * CACHED_MAX_BYTES;
  const cached = cachedStrings[slot] ?? '';
  if (cached.length === length && equalsCachedBytes(r.view, start, length, at)) return cached;
  if (!isAscii(buf, start, end)) return decodeStrict(r, start, end);
  const decoded = buf.latin1Slice(start, end);
  cachedStrings[slot] = decoded;
  for (let i = 0; i < length; i++) cachedBytes[at + i] = buf[start + i] ?? 0;
  return decoded;
}

function equalsCachedBytes(view: DataView, start: number, length: number, at: number): boolean {
  let i = 0;
  for (; i + 4 <= length; i += 4) if (view.getUint32(start + i) !== cachedBytesView.getUint32(at + i)) return false;
  for (; i < length; i++) if (view.getUint8(start + i) !== cachedBytes[at + i]) return false;
  return true;
}

function isAscii(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if ((buf[i] ?? 0) >= 0x80) return false;
  return true;
}

function decodeStrict(r: WireReader, start: number, end: number): string {
  try {
    return strictUtf8.decode(r.buf.subarray(start, end));
  } catch {
    return fail(r, 'invalid UTF-8 in a string');
  }
}
