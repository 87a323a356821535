/**
 * HTTP answers (and the interceptor's refusals) as gRPC statuses, as the OTLP specification asks:
 * 400 (an OTLP Status) INVALID_ARGUMENT with its message, 401 UNAUTHENTICATED, 403
 * PERMISSION_DENIED, 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE, a deadline DEADLINE_EXCEEDED,
 * anything else INTERNAL. Problem details travel as the status message.
 *
 * A refusal that says when to come back (HTTP `Retry-After`, an ApiError's `retryAfter`) carries a
 * `google.rpc.RetryInfo` in the status details (the `grpc-status-details-bin` trailer: a
 * `google.rpc.Status` whose `details` hold it as a `google.protobuf.Any`). OTLP exporters retry
 * RESOURCE_EXHAUSTED only when it is there, and wait the delay it gives before retrying either code.
 */
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { ApiError } from '../errors.ts';
import { StoreUnavailableError } from '../store/registry-port.ts';
import { otlpMessages } from '../otlp/messages.ts';

const OtlpStatus = otlpMessages.lookupType('otlp.Status');

/** google.rpc.Status, google.protobuf.Any, google.rpc.RetryInfo and google.protobuf.Duration. */
const rpc = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            RetryInfo: { fields: { retryDelay: { type: 'google.protobuf.Duration', id: 1 } } },
          },
        },
        protobuf: {
          nested: {
            Any: { fields: { typeUrl: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
            Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
          },
        },
      },
    },
  },
});
const RpcStatus = rpc.lookupType('google.rpc.Status');
const RetryInfo = rpc.lookupType('google.rpc.RetryInfo');

const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo';
/** The trailer holding a serialized google.rpc.Status (gRPC's rich error model). */
const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

const CODES: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  408: grpc.status.DEADLINE_EXCEEDED,
  413: grpc.status.INVALID_ARGUMENT,
  415: grpc.status.INVALID_ARGUMENT,
  429: grpc.status.RESOURCE_EXHAUSTED,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.DEADLINE_EXCEEDED,
};

const codeOf = (httpStatus: number): grpc.status => CODES[httpStatus] ?? grpc.status.INTERNAL;

/** A status to send: code, message and, for a refusal with a delay, the RetryInfo trailer. */
export interface GrpcStatus {
  code: grpc.status;
  details: string;
  metadata?: grpc.Metadata;
}

/**
 * `code` and `details`, with a RetryInfo of `retryAfterS` seconds in the status details when it
 * is given.
 */
export function grpcStatus(code: grpc.status, details: string, retryAfterS?: number): GrpcStatus {
  if (retryAfterS === undefined) return { code, details };
  const retryInfo = RetryInfo.encode(RetryInfo.fromObject({ retryDelay: { seconds: retryAfterS, nanos: 0 } })).finish();
  const status = RpcStatus.encode(
    RpcStatus.fromObject({ code, message: details, details: [{ typeUrl: RETRY_INFO_TYPE_URL, value: retryInfo }] }),
  ).finish();
  const metadata = new grpc.Metadata();
  metadata.set(STATUS_DETAILS_KEY, Buffer.from(status));
  return { code, details, metadata };
}

/** Whole seconds of a `Retry-After` header: delta-seconds or an HTTP date (at least 0); undefined otherwise. */
export function retryAfterSeconds(header: string | string[] | number | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The message of a failed answer: the OTLP Status's, or the problem's title and detail. */
function messageOf(contentType: string, body: Buffer): string {
  try {
    if (contentType.startsWith('application/x-protobuf')) {
      const status = OtlpStatus.decode(body) as unknown as { message?: string };
      return status.message ?? '';
    }
    const parsed = JSON.parse(body.toString('utf8')) as { title?: string; detail?: string; message?: string };
    return [parsed.title, parsed.detail ?? parsed.message].filter((s) => typeof s === 'string').join(': ');
  } catch {
    return '';
  }
}

/** The gRPC status of a failed HTTP answer (a 429 or 503 with Retry-After carries its RetryInfo). */
export function statusOfAnswer(
  httpStatus: number,
  headers: Record<string, string | string[] | number | undefined>,
  body: Buffer,
): GrpcStatus {
  const code = codeOf(httpStatus);
  const details = messageOf(String(headers['content-type'] ?? ''), body);
  const retryable = code === grpc.status.RESOURCE_EXHAUSTED || code === grpc.status.UNAVAILABLE;
  return grpcStatus(code, details, retryable ? retryAfterSeconds(headers['retry-after']) : undefined);
}

/** Seconds after which a store that was unavailable is worth asking again (the HTTP answer's). */
const STORE_RETRY_AFTER_S = 5;

/** The status of an error thrown before the call reached the route (authentication, permission). */
export function statusOfError(err: unknown): GrpcStatus {
  if (err instanceof ApiError)
    return grpcStatus(codeOf(err.status), `${err.code}: ${err.message}`, err.extras.retryAfter);
  if (err instanceof StoreUnavailableError)
    return grpcStatus(grpc.status.UNAVAILABLE, 'the registry store is unavailable; retry later', STORE_RETRY_AFTER_S);
  return { code: grpc.status.INTERNAL, details: 'internal error' };
}
