/**
 * The decoded shape of OTLP trace payloads and the decoding error, shared by the JSON/protobufjs
 * module (otlp/traces/decode.ts, which re-exports them) and the protobuf reader (otlp/traces/proto-reader.ts).
 * A module of their own so that those two do not import each other at run time.
 */

export type AttrValue = string | number | boolean | null;
export type Attributes = Map<string, AttrValue>;

/** A span as received, before mapping (ids lowercase hex, times in nanoseconds as bigint). */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  startNs: bigint;
  endNs: bigint;
  statusCode: number;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Attributes;
  resource: Attributes;
}

/** The payload is not an OTLP trace request, or is over a bound (400 with an OTLP Status body). */
export class OtlpDecodeError extends Error {}

/** A request with more spans than one request may carry (DESIGN §12). */
export function tooManySpans(maxSpans: number): OtlpDecodeError {
  return new OtlpDecodeError(`the request carries more than ${maxSpans} spans; send at most ${maxSpans} per request`);
}

/** Distinct attributes of one span, log record or resource (the OpenTelemetry SDKs' default limit). */
export const MAX_ATTRIBUTES = 128;

/** A log record or resource past MAX_ATTRIBUTES: the logs receivers refuse the body (400). */
export function tooManyAttributes(what: string): OtlpDecodeError {
  return new OtlpDecodeError(`${what} with more than ${MAX_ATTRIBUTES} attributes`);
}
