/**
 * The body of an OTLP request decoded off the event loop (a thread of otlp/decode-pool.ts): protobuf or
 * JSON into spans (a trace request's spans, or the spans harness events on the logs signal stand
 * for: otlp/logs/mapping.ts), each mapped and checked (otlp/traces/mapping.ts). Only the mapped spans travel
 * back, as columns (otlp/span-batch.ts), never the attribute maps, with the evaluation events of a
 * logs request, mapped and checked (otlp/logs/evaluations.ts); `ignored` counts log records that
 * map to neither and data points of metrics that are not stored. The points of the harness metrics
 * that are (otlp/metrics/mapping.ts) come back mapped and checked. A malformed or over-bound body
 * answers `{ error }`.
 */
import { OtlpDecodeError, decodeJson, decodeProtobuf } from './traces/decode.ts';
import { decodeLogsJson } from './logs/decode.ts';
import { decodeLogsRequestProto } from './logs/proto-reader.ts';
import { spanOfLogRecord } from './logs/mapping.ts';
import { isEvaluation, mapEvaluation, type MappedEvaluation } from './logs/evaluations.ts';
import { decodeMetrics } from './metrics/decode.ts';
import { HARNESS_METRIC_NAMES, mapMetricPoint, type MappedPoint } from './metrics/mapping.ts';
import type { DecodedSpan } from './types.ts';
import { toBatch, type SpanBatch } from './span-batch.ts';
import { mapSpan, type SpanBounds } from './traces/mapping.ts';

export interface DecodeTask {
  body: Uint8Array;
  protobuf: boolean;
  signal: 'traces' | 'logs' | 'metrics';
  maxSpans: number;
  bounds: SpanBounds;
}

export interface Decoded {
  spans: SpanBatch;
  /** Mapped harness metric points (metrics requests only). */
  points: MappedPoint[];
  /** Mapped evaluation events (logs requests only). */
  evaluations: MappedEvaluation[];
  ignored: number;
}

export type DecodeResult = Decoded | { error: string };

function spansOf(task: DecodeTask): { spans: DecodedSpan[]; evaluations: MappedEvaluation[]; ignored: number } {
  if (task.signal === 'traces') {
    const spans = task.protobuf ? decodeProtobuf(task.body, task.maxSpans) : decodeJson(task.body, task.maxSpans);
    return { spans, evaluations: [], ignored: 0 };
  }
  const records = task.protobuf
    ? decodeLogsRequestProto(task.body, task.maxSpans)
    : decodeLogsJson(task.body, task.maxSpans);
  const spans: DecodedSpan[] = [];
  const evaluations: MappedEvaluation[] = [];
  const traceIds = new Map<string, string>();
  for (const r of records) {
    const mapped = isEvaluation(r) ? mapEvaluation(r, task.bounds) : spanOfLogRecord(r, traceIds);
    if (mapped === null) continue;
    if ('traceId' in mapped) spans.push(mapped);
    else evaluations.push(mapped);
  }
  return { spans, evaluations, ignored: records.length - spans.length - evaluations.length };
}

export default function decode(task: DecodeTask): DecodeResult {
  try {
    if (task.signal === 'metrics') {
      const { points, others } = decodeMetrics(task.body, task.protobuf, task.maxSpans, HARNESS_METRIC_NAMES);
      const mapped = points.map((p) => mapMetricPoint(p, task.bounds));
      return { spans: toBatch([]), points: mapped, evaluations: [], ignored: others };
    }
    const { spans, evaluations, ignored } = spansOf(task);
    return { spans: toBatch(spans.map((s) => mapSpan(s, task.bounds))), points: [], evaluations, ignored };
  } catch (err) {
    if (err instanceof OtlpDecodeError) return { error: err.message };
    throw err;
  }
}
