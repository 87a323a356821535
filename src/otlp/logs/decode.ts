/**
 * OTLP log requests (ExportLogsServiceRequest, protobuf or JSON) decoded into plain log records.
 * Protobuf bodies are read by the hand-written reader (otlp/logs/proto-reader.ts), bounded as it reads;
 * JSON ones are parsed by otlp/json-body.ts (depth-checked, strings well formed) and walked here. The bounds are the trace receiver's: the
 * body's size before decoding, and at most `maxRecords` records (OTLP_MAX_SPANS) per request.
 */
import { otlpMessages } from '../messages.ts';
import { attributes, isObj, jsonHexId, nanos, type Obj } from '../traces/decode.ts';
import { parseJsonObject } from '../json-body.ts';
import { MAX_ATTRIBUTES, OtlpDecodeError, tooManyAttributes, type AttrValue, type Attributes } from '../types.ts';

/** A log record as received (ids lowercase hex or '', times in nanoseconds, 0n when absent). */
export interface DecodedLogRecord {
  timeNs: bigint;
  observedNs: bigint;
  /** LogRecord.event_name, else the `event.name` attribute, else null. */
  eventName: string | null;
  body: AttrValue;
  traceId: string;
  /** The span the record was emitted in (an evaluation's evaluated span), or ''. */
  spanId: string;
  attributes: Attributes;
  resource: Attributes;
}

const Request = otlpMessages.lookupType('otlp.ExportLogsServiceRequest');

function stringOrNull(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function bodyValue(v: unknown): AttrValue {
  // One attribute list reads an AnyValue the same way for both encodings.
  return attributes([{ key: 'body', value: v }]).get('body') ?? null;
}

/** The records of a decoded ExportLogsServiceRequest object (parsed JSON or a protobufjs message). */
export function collectLogRecords(message: Obj, hexId: (v: unknown) => string, maxRecords: number): DecodedLogRecord[] {
  const out: DecodedLogRecord[] = [];
  const resourceLogs = message.resourceLogs;
  if (resourceLogs !== undefined && !Array.isArray(resourceLogs))
    throw new OtlpDecodeError('resourceLogs must be an array');
  for (const rl of (resourceLogs ?? []) as unknown[]) {
    if (!isObj(rl)) throw new OtlpDecodeError('resourceLogs entries must be objects');
    const resource = attributes(isObj(rl.resource) ? rl.resource.attributes : undefined);
    // The protobuf reader's bound, so that both encodings answer a body alike.
    if (resource.size > MAX_ATTRIBUTES) throw tooManyAttributes('a resource');
    for (const sl of (Array.isArray(rl.scopeLogs) ? rl.scopeLogs : []) as unknown[]) {
      for (const r of (isObj(sl) && Array.isArray(sl.logRecords) ? sl.logRecords : []) as unknown[]) {
        if (!isObj(r)) throw new OtlpDecodeError('logRecords entries must be objects');
        if (out.length >= maxRecords)
          throw new OtlpDecodeError(
            `the request carries more than ${maxRecords} log records; send at most ${maxRecords} per request`,
          );
        const attrs = attributes(r.attributes);
        if (attrs.size > MAX_ATTRIBUTES) throw tooManyAttributes('a log record');
        out.push({
          timeNs: nanos(r.timeUnixNano),
          observedNs: nanos(r.observedTimeUnixNano),
          eventName: stringOrNull(r.eventName) ?? stringOrNull(attrs.get('event.name')),
          body: bodyValue(r.body),
          traceId: hexId(r.traceId),
          spanId: hexId(r.spanId),
          attributes: attrs,
          resource,
        });
      }
    }
  }
  return out;
}

export function decodeLogsJson(body: Uint8Array, maxRecords: number): DecodedLogRecord[] {
  return collectLogRecords(parseJsonObject(body, 'ExportLogsServiceRequest'), jsonHexId, maxRecords);
}

/** Encodes an ExportLogsServiceRequest to protobuf: for clients, tests and benchmarks. */
export function encodeLogsRequest(message: object): Buffer {
  return Buffer.from(Request.encode(Request.fromObject(message)).finish());
}
