/**
 * Reads gRPC's rich error model as a client does, from the .proto definitions of googleapis
 * (google/rpc/status.proto, google/rpc/error_details.proto, google/protobuf/any.proto and
 * duration.proto), independently of the encoder under test.
 */
import protobuf from 'protobufjs';

const { root } = protobuf.parse(`
syntax = "proto3";
package google.rpc;
message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
message Any { string type_url = 1; bytes value = 2; }
message RetryInfo { Duration retry_delay = 1; }
message Duration { int64 seconds = 1; int32 nanos = 2; }
`);
const Status = root.lookupType('google.rpc.Status');
const RetryInfo = root.lookupType('google.rpc.RetryInfo');

/**
 * The `grpc-status-details-bin` trailer's status code and the delay of its RetryInfo (whole
 * seconds); null without a trailer. Throws when the trailer holds anything else.
 */
export function decodeRetryDelay(details: Buffer | null | undefined): { code: number; seconds: number } | null {
  if (details === null || details === undefined) return null;
  const status = Status.toObject(Status.decode(details), { longs: Number }) as {
    code: number;
    details?: { typeUrl: string; value: Uint8Array }[];
  };
  const [any, ...more] = status.details ?? [];
  if (any?.typeUrl !== 'type.googleapis.com/google.rpc.RetryInfo' || more.length > 0)
    throw new Error(`unexpected status details ${JSON.stringify(status.details)}`);
  const info = RetryInfo.toObject(RetryInfo.decode(any.value), { longs: Number }) as {
    retryDelay?: { seconds?: number; nanos?: number };
  };
  if ((info.retryDelay?.nanos ?? 0) !== 0) throw new Error('a RetryInfo delay with nanoseconds');
  return { code: status.code, seconds: info.retryDelay?.seconds ?? 0 };
}
