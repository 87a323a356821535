/**
 * The former protobuf decoding path of src/otlp/traces/decode.ts, kept for tests and the decode
 * benchmark only: protobufjs `decode` with the project's message definitions, then the walk into
 * DecodedSpan objects that OTLP/JSON uses. The hand-written reader (otlp/traces/proto-reader.ts) must give
 * the same result.
 */
import { collectSpans, otlpMessages } from '../../src/otlp/traces/decode.ts';
import { OtlpDecodeError, type DecodedSpan } from '../../src/otlp/types.ts';

const Request = otlpMessages.lookupType('otlp.ExportTraceServiceRequest');

/** Unset bytes fields decode to the default (an empty array), set ones to views of the body. */
function bytesHex(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (!(v instanceof Uint8Array)) return Array.isArray(v) ? Buffer.from(v as number[]).toString('hex') : '';
  return Buffer.from(v.buffer, v.byteOffset, v.length).toString('hex');
}

/** The former `decodeProtobuf`: protobufjs decoding, any failure as OtlpDecodeError. */
export function decodeProtobufReference(body: Buffer): DecodedSpan[] {
  let message: Record<string, unknown>;
  try {
    message = Request.decode(body);
  } catch {
    throw new OtlpDecodeError('the body is not a protobuf ExportTraceServiceRequest');
  }
  return collectSpans(message, bytesHex);
}
