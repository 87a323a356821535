/**
 * A hand-written reader of protobuf ExportLogsServiceRequest bodies, on the trace reader's wire
 * primitives and KeyValue decoding (otlp/traces/proto-reader.ts): one pass, bounded before anything is
 * built. Past `maxRecords` records, or a record or resource with more than MAX_ATTRIBUTES distinct
 * attributes, the body is refused (400) as soon as the reader gets there, so a 16 MiB body of empty
 * records or attributes costs a scan, not millions of objects. Fields the receiver does not use
 * (severity, flags, dropped counts, scope) are skipped; array, kvlist and bytes values read as null.
 */
import type { DecodedLogRecord } from './decode.ts';
import { readAnyValue, readKeyValue, SpanReader } from '../traces/proto-reader.ts';
import { MAX_ATTRIBUTES, OtlpDecodeError, tooManyAttributes, type AttrValue, type Attributes } from '../types.ts';
import { I64, LEN, readFixed64, readHex, readLimit, readString, readTag, skipField, tag } from '../protobuf-wire.ts';

const REQUEST_RESOURCE_LOGS = tag(1, LEN);
const RESOURCE_LOGS_RESOURCE = tag(1, LEN);
const RESOURCE_LOGS_SCOPE_LOGS = tag(2, LEN);
const RESOURCE_ATTRIBUTES = tag(1, LEN);
const SCOPE_LOGS_LOG_RECORDS = tag(2, LEN);
const LOG_TIME = tag(1, I64);
const LOG_BODY = tag(5, LEN);
const LOG_ATTRIBUTES = tag(6, LEN);
const LOG_TRACE_ID = tag(9, LEN);
const LOG_SPAN_ID = tag(10, LEN);
const LOG_OBSERVED_TIME = tag(11, I64);
const LOG_EVENT_NAME = tag(12, LEN);

/** Message depths as protobufjs counts them (the request is 0), as in the trace reader. */
const RESOURCE_KEY_VALUE_DEPTH = 3;
const RECORD_KEY_VALUE_DEPTH = 4;
/** LogRecord.body, an AnyValue in the record: as deep as a record's KeyValue. */
const BODY_DEPTH = RECORD_KEY_VALUE_DEPTH;

function setAttribute(r: SpanReader, attributes: Attributes, what: string): void {
  if (!attributes.has(r.key) && attributes.size >= MAX_ATTRIBUTES) throw tooManyAttributes(what);
  attributes.set(r.key, r.value);
}

/** Decodes the log records of a body, in body order; more than `maxRecords` fails. */
export function decodeLogsRequestProto(body: Uint8Array, maxRecords: number): DecodedLogRecord[] {
  const r = new SpanReader(body, maxRecords, 'protobuf ExportLogsServiceRequest');
  const records: DecodedLogRecord[] = [];
  const end = body.length;
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === REQUEST_RESOURCE_LOGS) readResourceLogs(r, readLimit(r, end), records);
    else skipField(r, t, end);
  }
  return records;
}

function readResourceLogs(r: SpanReader, end: number, records: DecodedLogRecord[]): void {
  const resource: Attributes = new Map();
  while (r.pos < end) {
    const t = readTag(r, end);
    if (t === RESOURCE_LOGS_RESOURCE) {
      const resourceEnd = readLimit(r, end);
      while (r.pos < resourceEnd) {
        const rt = readTag(r, resourceEnd);
        if (rt !== RESOURCE_ATTRIBUTES) {
          skipField(r, rt, resourceEnd);
          continue;
        }
        readKeyValue(r, readLimit(r, resourceEnd), RESOURCE_KEY_VALUE_DEPTH);
        setAttribute(r, resource, 'a resource');
      }
    } else if (t === RESOURCE_LOGS_SCOPE_LOGS) {
      const scopeEnd = readLimit(r, end);
      while (r.pos < scopeEnd) {
        const st = readTag(r, scopeEnd);
        if (st !== SCOPE_LOGS_LOG_RECORDS) {
          skipField(r, st, scopeEnd);
          continue;
        }
        if (records.length >= r.maxSpans)
          throw new OtlpDecodeError(
            `the request carries more than ${r.maxSpans} log records; send at most ${r.maxSpans} per request`,
          );
        records.push(readLogRecord(r, readLimit(r, scopeEnd), resource));
      }
    } else {
      skipField(r, t, end);
    }
  }
}

function readLogRecord(r: SpanReader, end: number, resource: Attributes): DecodedLogRecord {
  const attributes: Attributes = new Map();
  let timeNs = 0n;
  let observedNs = 0n;
  let body: AttrValue = null;
  let traceId = '';
  let spanId = '';
  let eventName = '';
  while (r.pos < end) {
    const t = readTag(r, end);
    switch (t) {
      case LOG_TIME:
        timeNs = readFixed64(r, end);
        break;
      case LOG_OBSERVED_TIME:
        observedNs = readFixed64(r, end);
        break;
      case LOG_BODY:
        body = readAnyValue(r, readLimit(r, end), body, BODY_DEPTH);
        break;
      case LOG_ATTRIBUTES:
        readKeyValue(r, readLimit(r, end), RECORD_KEY_VALUE_DEPTH);
        setAttribute(r, attributes, 'a log record');
        break;
      case LOG_TRACE_ID:
        traceId = readHex(r, end);
        break;
      case LOG_SPAN_ID:
        spanId = readHex(r, end);
        break;
      case LOG_EVENT_NAME:
        eventName = readString(r, end);
        break;
      default:
        skipField(r, t, end);
    }
  }
  const named = attributes.get('event.name');
  return {
    timeNs,
    observedNs,
    eventName: eventName !== '' ? eventName : typeof named === 'string' && named !== '' ? named : null,
    body,
    traceId,
    spanId,
    attributes,
    resource,
  };
}
