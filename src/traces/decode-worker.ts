/**
 * The body of an OTLP request decoded off the event loop (a thread of decode-pool.ts): protobuf or
 * JSON into spans, each mapped and checked (span-mapping.ts). Only the mapped spans travel back,
 * as columns (span-batch.ts), never the attribute maps. A malformed or over-bound body answers `{ error }`.
 */
import { OtlpDecodeError, decodeJson, decodeProtobuf } from './otlp-decode.ts';
import { toBatch, type SpanBatch } from './span-batch.ts';
import { mapSpan, type SpanBounds } from './span-mapping.ts';

export interface DecodeTask {
  body: Uint8Array;
  protobuf: boolean;
  maxSpans: number;
  bounds: SpanBounds;
}

export type DecodeResult = { spans: SpanBatch } | { error: string };

export default function decode(task: DecodeTask): DecodeResult {
  try {
    const spans = task.protobuf ? decodeProtobuf(task.body, task.maxSpans) : decodeJson(task.body, task.maxSpans);
    return { spans: toBatch(spans.map((s) => mapSpan(s, task.bounds))) };
  } catch (err) {
    if (err instanceof OtlpDecodeError) return { error: err.message };
    throw err;
  }
}
