/**
 * The body of an OTLP request decoded off the event loop (a thread of decode-pool.ts): protobuf or
 * JSON into spans, each mapped and checked (span-mapping.ts). Only the mapped spans travel back,
 * never the attribute maps. A malformed or over-bound body answers `{ error }`.
 */
import { OtlpDecodeError, decodeJson, decodeProtobuf } from './otlp-decode.ts';
import { mapSpan, type MappedSpan, type SpanBounds } from './span-mapping.ts';

export interface DecodeTask {
  body: Uint8Array;
  protobuf: boolean;
  maxSpans: number;
  bounds: SpanBounds;
}

export type DecodeResult = { spans: MappedSpan[] } | { error: string };

export default function decode(task: DecodeTask): DecodeResult {
  try {
    const spans = task.protobuf ? decodeProtobuf(task.body, task.maxSpans) : decodeJson(task.body, task.maxSpans);
    return { spans: spans.map((s) => mapSpan(s, task.bounds)) };
  } catch (err) {
    if (err instanceof OtlpDecodeError) return { error: err.message };
    throw err;
  }
}
