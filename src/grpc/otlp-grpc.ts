/**
 * OTLP over gRPC (OTLP_GRPC_PORT, off by default): the trace, logs and metrics services of
 * opentelemetry-proto's collector, each `Export` call answered by the HTTP receiver's route
 * (`POST /v1/traces|logs|metrics`) in process, so that authentication (the `authorization`
 * metadata), load shedding, deadlines, bounds and answers are exactly the HTTP ones. Messages stay
 * bytes: the route decodes them on its threads. grpc-js inflates gzip messages itself, refusing
 * any message (compressed or inflated) past OTLP_MAX_DECOMPRESSED_BYTES.
 *
 * The token is checked by an interceptor when the call's metadata arrives, before its message is
 * read: a caller without a valid credential never makes the service receive or inflate a message
 * (the route checks it again, with everything else; the authenticator's token cache makes the
 * second check a lookup). Streams per connection are limited, connections are not: an
 * authenticated sender can hold 16 MiB per call in flight, as it can over HTTP.
 *
 * HTTP answers map to gRPC status codes as the OTLP specification asks: 400 (an OTLP Status)
 * INVALID_ARGUMENT with its message, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 429
 * RESOURCE_EXHAUSTED, 503 UNAVAILABLE (both retryable), a deadline DEADLINE_EXCEEDED, anything else
 * INTERNAL. Problem details travel as the status message.
 */
import * as grpc from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import { otlpMessages } from '../traces/otlp-messages.ts';

const StatusMessage = otlpMessages.lookupType('otlp.Status');

const SERVICES = {
  traces: 'opentelemetry.proto.collector.trace.v1.TraceService',
  logs: 'opentelemetry.proto.collector.logs.v1.LogsService',
  metrics: 'opentelemetry.proto.collector.metrics.v1.MetricsService',
} as const;

const bytes = (b: Buffer) => b;
/** Calls in flight on one connection (HTTP/2 streams); an exporter sends one at a time. */
const MAX_STREAMS_PER_CONNECTION = 8;

function definition(service: string): grpc.ServiceDefinition {
  return {
    Export: {
      path: `/${service}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: bytes,
      requestDeserialize: bytes,
      responseSerialize: bytes,
      responseDeserialize: bytes,
    },
  };
}

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

/** The message of a failed answer: the OTLP Status's, or the problem's title and detail. */
function messageOf(contentType: string, body: Buffer): string {
  try {
    if (contentType.startsWith('application/x-protobuf')) {
      const status = StatusMessage.decode(body) as unknown as { message?: string };
      return status.message ?? '';
    }
    const parsed = JSON.parse(body.toString('utf8')) as { title?: string; detail?: string; message?: string };
    return [parsed.title, parsed.detail ?? parsed.message].filter((s) => typeof s === 'string').join(': ');
  } catch {
    return '';
  }
}

function exportHandler(app: FastifyInstance, signal: keyof typeof SERVICES): grpc.handleUnaryCall<Buffer, Buffer> {
  return (call, callback) => {
    const authorization = call.metadata.get('authorization')[0];
    void app
      .inject({
        method: 'POST',
        url: `/v1/${signal}`,
        headers: {
          'content-type': 'application/x-protobuf',
          ...(typeof authorization === 'string' ? { authorization } : {}),
        },
        payload: call.request,
      })
      .then((res) => {
        if (res.statusCode === 200) {
          callback(null, res.rawPayload);
          return;
        }
        const code = CODES[res.statusCode] ?? grpc.status.INTERNAL;
        callback({ code, details: messageOf(res.headers['content-type'] ?? '', res.rawPayload) });
      })
      .catch(() => {
        callback({ code: grpc.status.INTERNAL, details: 'internal error' });
      });
  };
}

/** The service's authenticator, as the interceptor needs it: resolves for a valid credential, throws its ApiError otherwise. */
export type Authenticate = (authorization: string | undefined) => Promise<unknown>;

function authInterceptor(authenticate: Authenticate): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, proceed) => {
            const header = metadata.get('authorization')[0];
            authenticate(typeof header === 'string' ? header : undefined).then(
              () => {
                proceed(metadata);
              },
              (err: unknown) => {
                const status = err instanceof ApiError ? err.status : 500;
                const details = err instanceof ApiError ? `${err.code}: ${err.message}` : 'internal error';
                call.sendStatus({ code: CODES[status] ?? grpc.status.INTERNAL, details });
              },
            );
          },
        });
      },
    });
}

export interface OtlpGrpcServer {
  port: number;
  close(): Promise<void>;
}

/** Starts the gRPC services on `host:port` (0 picks a free port) in front of `app`'s routes. */
export async function startOtlpGrpc(
  app: FastifyInstance,
  options: { host: string; port: number; maxMessageBytes: number; authenticate: Authenticate },
): Promise<OtlpGrpcServer> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.max_send_message_length': 1024 * 1024,
    'grpc.max_concurrent_streams': MAX_STREAMS_PER_CONNECTION,
    interceptors: [authInterceptor(options.authenticate)],
  });
  for (const [signal, service] of Object.entries(SERVICES) as [keyof typeof SERVICES, string][]) {
    server.addService(definition(service), { Export: exportHandler(app, signal) });
  }
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (err) reject(err);
      else resolve(bound);
    });
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
      }),
  };
}
