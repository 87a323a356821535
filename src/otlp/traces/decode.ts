/**
 * OTLP/HTTP trace payloads (protobuf and JSON, optionally gzip) decoded into plain spans. Protobuf
 * bodies are read by the hand-written reader in otlp/traces/proto-reader.ts (the ingestion hot path); the
 * protobufjs definitions (otlp/messages.ts) only encode here: responses, statuses and requests for
 * clients and benchmarks. JSON bodies are parsed by otlp/json-body.ts, as those of logs and metrics.
 */
import { otlpMessages } from '../messages.ts';
import { decodeExportRequestProto } from './proto-reader.ts';
import { parseJsonObject } from '../json-body.ts';
import { OtlpDecodeError, tooManySpans, type AttrValue, type Attributes, type DecodedSpan } from '../types.ts';

export { OtlpDecodeError, type DecodedSpan } from '../types.ts';
export { otlpMessages } from '../messages.ts';

const Request = otlpMessages.lookupType('otlp.ExportTraceServiceRequest');
const StatusMessage = otlpMessages.lookupType('otlp.Status');

export type Obj = Record<string, unknown>;

/**
 * A value as String() writes it: protobufjs Longs, JSON numbers and numeric text all print their
 * decimal digits, which is what the callers want (an object without its own toString reads as NaN).
 */
const text = (v: unknown): string => String(v);
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object';

function anyValue(v: unknown): AttrValue {
  if (v === null || typeof v !== 'object') return null;
  const o = v as Obj;
  // An object naming its set oneof member in `value` (as protobufjs messages do) is read through it.
  if (typeof o.value === 'string' && o.value in o) {
    const set = o[o.value];
    if (o.value === 'stringValue') return text(set);
    if (o.value === 'boolValue') return Boolean(set);
    if (o.value === 'intValue' || o.value === 'doubleValue') {
      const n = Number(isObj(set) ? text(set) : set);
      return Number.isFinite(n) ? n : null;
    }
    return null;
  }
  if (typeof o.stringValue === 'string') return o.stringValue;
  if (typeof o.boolValue === 'boolean') return o.boolValue;
  if (o.intValue !== undefined && o.intValue !== null) {
    const n = Number(isObj(o.intValue) ? text(o.intValue) : o.intValue);
    return Number.isFinite(n) ? n : null;
  }
  if (o.doubleValue !== undefined && o.doubleValue !== null) {
    const n = Number(o.doubleValue);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export function attributes(list: unknown): Attributes {
  const out: Attributes = new Map();
  if (!Array.isArray(list)) return out;
  for (const kv of list) {
    if (kv === null || typeof kv !== 'object') continue;
    const { key, value } = kv as Obj;
    if (typeof key === 'string') out.set(key, anyValue(value));
  }
  return out;
}

/** An id as OTLP/JSON carries it: hex text, compared in lowercase. */
export function jsonHexId(v: unknown): string {
  return typeof v === 'string' ? v.toLowerCase() : '';
}

const MAX_FIXED64 = 2n ** 64n - 1n;

/**
 * A fixed64 time in nanoseconds: a decimal string or an integer number (OTLP/JSON), or protobufjs's
 * {low, high}. Anything else, or a value beyond 2^64 - 1, is -1 (an invalid time).
 */
export function nanos(v: unknown): bigint {
  if (v === undefined || v === null) return 0n;
  // Long-like {low, high} values (protobufjs's fixed64) are joined from their halves.
  if (typeof v === 'object' && typeof (v as { low?: unknown }).low === 'number') {
    const { low, high } = v as { low: number; high: number };
    return (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0);
  }
  const raw = typeof v === 'object' ? text(v) : v;
  if (typeof raw === 'number') return Number.isInteger(raw) && raw >= 0 && raw <= 2 ** 64 ? cap(BigInt(raw)) : -1n;
  // At most 20 digits: BigInt of a long digit string costs time, and no fixed64 needs more.
  return typeof raw === 'string' && /^\d{1,20}$/.test(raw) ? cap(BigInt(raw)) : -1n;
}

const cap = (n: bigint) => (n > MAX_FIXED64 ? -1n : n);

const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'].map((k) => `SPAN_KIND_${k}`);

/**
 * Span.kind: the enum's number as sent (OTLP/JSON, protobufjs: any int32, as the protobuf reader
 * reads it; only CLIENT and SERVER mean anything here), its name (protobuf JSON mapping), else 0.
 */
function spanKind(v: unknown): number {
  if (typeof v === 'number') return v | 0;
  if (typeof v === 'string') return Math.max(0, KINDS.indexOf(v));
  return 0;
}

/**
 * The spans of a decoded ExportTraceServiceRequest object: parsed OTLP/JSON, or a protobufjs
 * message (`hexId` turns the message's id fields into lowercase hex).
 */
export function collectSpans(
  message: Obj,
  hexId: (v: unknown) => string,
  maxSpans = Number.POSITIVE_INFINITY,
): DecodedSpan[] {
  const out: DecodedSpan[] = [];
  const resourceSpans = message.resourceSpans;
  if (resourceSpans !== undefined && !Array.isArray(resourceSpans))
    throw new OtlpDecodeError('resourceSpans must be an array');
  for (const rs of (resourceSpans ?? []) as unknown[]) {
    if (!isObj(rs)) throw new OtlpDecodeError('resourceSpans entries must be objects');
    const resource = attributes(isObj(rs.resource) ? rs.resource.attributes : undefined);
    for (const ss of (Array.isArray(rs.scopeSpans) ? rs.scopeSpans : []) as unknown[]) {
      for (const s of (isObj(ss) && Array.isArray(ss.spans) ? ss.spans : []) as unknown[]) {
        if (!isObj(s)) throw new OtlpDecodeError('spans entries must be objects');
        if (out.length >= maxSpans) throw tooManySpans(maxSpans);
        const status = (s.status ?? {}) as Obj;
        out.push({
          traceId: hexId(s.traceId),
          spanId: hexId(s.spanId),
          parentSpanId: hexId(s.parentSpanId) || null,
          name: typeof s.name === 'string' ? s.name : '',
          startNs: nanos(s.startTimeUnixNano),
          endNs: nanos(s.endTimeUnixNano),
          statusCode: Number(status.code ?? 0),
          kind: spanKind(s.kind),
          attributes: attributes(s.attributes),
          resource,
        });
      }
    }
  }
  return out;
}

export function decodeProtobuf(body: Uint8Array, maxSpans = Number.POSITIVE_INFINITY): DecodedSpan[] {
  return decodeExportRequestProto(body, maxSpans);
}

export function decodeJson(body: Uint8Array, maxSpans = Number.POSITIVE_INFINITY): DecodedSpan[] {
  return collectSpans(parseJsonObject(body, 'ExportTraceServiceRequest'), jsonHexId, maxSpans);
}

/** The signals the receiver answers, with the partial-success field counting what each rejects. */
const answer = (type: string, rejected: string) => ({ type: otlpMessages.lookupType(type), rejected });
const ANSWERS = {
  traces: answer('otlp.ExportTraceServiceResponse', 'rejectedSpans'),
  logs: answer('otlp.ExportLogsServiceResponse', 'rejectedLogRecords'),
  metrics: answer('otlp.ExportMetricsServiceResponse', 'rejectedDataPoints'),
};
export type OtlpSignal = keyof typeof ANSWERS;

export function encodeResponse(
  rejected: number,
  errorMessage: string,
  protobufOut: boolean,
  signal: OtlpSignal = 'traces',
): Buffer | string {
  const { type, rejected: field } = ANSWERS[signal];
  // With nothing rejected, a message is a warning (the OTLP specification allows partial_success so).
  const body = rejected > 0 || errorMessage !== '' ? { partialSuccess: { [field]: rejected, errorMessage } } : {};
  if (!protobufOut) return JSON.stringify(body);
  return Buffer.from(type.encode(type.fromObject(body)).finish());
}

export function encodeStatus(code: number, message: string, protobufOut: boolean): Buffer | string {
  if (!protobufOut) return JSON.stringify({ code, message });
  return Buffer.from(StatusMessage.encode(StatusMessage.fromObject({ code, message })).finish());
}

/** Encodes an ExportTraceServiceRequest (ids as bytes) to protobuf: for clients and benchmarks. */
export function encodeExportRequest(message: object): Buffer {
  return Buffer.from(Request.encode(Request.fromObject(message)).finish());
}
