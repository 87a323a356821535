/**
 * The body of an OTLP request decoded off the event loop (a thread of decode-pool.ts): protobuf or
 * JSON into spans (a trace request's spans, or the spans harness events on the logs signal stand
 * for: harness-events.ts), each mapped and checked (span-mapping.ts). Only the mapped spans travel
 * back, as columns (span-batch.ts), never the attribute maps; `ignored` counts log records that
 * map to no span (and the data points of a metrics request, none of which is stored yet). A malformed or over-bound body answers `{ error }`.
 */
import { OtlpDecodeError, decodeJson, decodeProtobuf } from './otlp-decode.ts';
import { decodeLogsJson } from './otlp-logs.ts';
import { decodeLogsRequestProto } from './otlp-logs-reader.ts';
import { spanOfLogRecord } from './harness-events.ts';
import { countMetricsJson, countMetricsProtobuf } from './otlp-metrics.ts';
import type { DecodedSpan } from './otlp-types.ts';
import { toBatch, type SpanBatch } from './span-batch.ts';
import { mapSpan, type SpanBounds } from './span-mapping.ts';

export interface DecodeTask {
  body: Uint8Array;
  protobuf: boolean;
  signal: 'traces' | 'logs' | 'metrics';
  maxSpans: number;
  bounds: SpanBounds;
}

export type DecodeResult = { spans: SpanBatch; ignored: number } | { error: string };

function spansOf(task: DecodeTask): { spans: DecodedSpan[]; ignored: number } {
  if (task.signal === 'traces') {
    const spans = task.protobuf ? decodeProtobuf(task.body, task.maxSpans) : decodeJson(task.body, task.maxSpans);
    return { spans, ignored: 0 };
  }
  if (task.signal === 'metrics') {
    const count = task.protobuf ? countMetricsProtobuf : countMetricsJson;
    return { spans: [], ignored: count(task.body, task.maxSpans) };
  }
  const records = task.protobuf
    ? decodeLogsRequestProto(task.body, task.maxSpans)
    : decodeLogsJson(task.body, task.maxSpans);
  const spans: DecodedSpan[] = [];
  const traceIds = new Map<string, string>();
  for (const r of records) {
    const span = spanOfLogRecord(r, traceIds);
    if (span !== null) spans.push(span);
  }
  return { spans, ignored: records.length - spans.length };
}

export default function decode(task: DecodeTask): DecodeResult {
  try {
    const { spans, ignored } = spansOf(task);
    return { spans: toBatch(spans.map((s) => mapSpan(s, task.bounds))), ignored };
  } catch (err) {
    if (err instanceof OtlpDecodeError) return { error: err.message };
    throw err;
  }
}
