/**
 * OTLP over gRPC (OTLP_GRPC_PORT, off by default): the trace, logs and metrics services of
 * opentelemetry-proto's collector, each `Export` call answered by the HTTP receiver's route
 * (`POST /v1/traces|logs|metrics`) in process, so that authentication (the `authorization`
 * metadata), load shedding, deadlines, bounds and answers are exactly the HTTP ones; its statuses
 * are grpc-status.ts's. Messages stay bytes: the route decodes them on its threads. grpc-js
 * inflates gzip messages itself, refusing any message (compressed or inflated) past
 * OTLP_MAX_DECOMPRESSED_BYTES.
 *
 * What one peer can hold (docs/deployment.md "Connections"): connections are capped
 * (connections.ts), a connection without calls is closed after IDLE_TIMEOUT_MS, every connection
 * is asked to go away after OTLP_GRPC_MAX_CONNECTION_AGE_MS and must answer the server's pings;
 * calls are capped per connection (HTTP/2 streams) and per caller, and each must arrive whole
 * within REQUEST_TIMEOUT_MS of its start (call-guard.ts, which also checks the token and the right
 * to ingest before a message is read).
 */
import * as grpc from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import { callerKey, type Caller } from '../auth/caller.ts';
import { loadAccess } from '../auth/access.ts';
import type { Config } from '../config.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RegistryStore } from '../store/registry-port.ts';
import { assertCanIngest } from '../otlp/ingest.ts';
import { callGuard, type Authorize } from './call-guard.ts';
import { grpcConnections } from './connections.ts';
import { statusOfAnswer } from './grpc-status.ts';

const SERVICES = {
  traces: 'opentelemetry.proto.collector.trace.v1.TraceService',
  logs: 'opentelemetry.proto.collector.logs.v1.LogsService',
  metrics: 'opentelemetry.proto.collector.metrics.v1.MetricsService',
} as const;

const bytes = (b: Buffer) => b;
/** Calls in flight on one connection (HTTP/2 streams; more are refused with REFUSED_STREAM). */
const MAX_CALLS_PER_CONNECTION = 8;
/** A peer must answer the server's ping, sent after this long without one, within the timeout. */
const KEEPALIVE_TIME_MS = 60_000;
const KEEPALIVE_TIMEOUT_MS = 20_000;

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
        callback(statusOfAnswer(res.statusCode, res.headers, res.rawPayload));
      })
      .catch(() => {
        callback({ code: grpc.status.INTERNAL, details: 'internal error' });
      });
  };
}

/** The service's authenticator, as the gRPC port needs it: the caller of a valid credential, or its ApiError thrown. */
type Authenticate = (authorization: string | undefined) => Promise<Caller>;

/**
 * The right the HTTP receiver checks before reading a body (`assertCanIngest`), checked here
 * before a message is read: authenticated, and allowed to create content in some workspace.
 */
function ingestAuthorizer(authenticate: Authenticate, registry: RegistryStore): Authorize {
  return async (authorization) => {
    const caller = await authenticate(authorization);
    let access: ReturnType<typeof loadAccess> | undefined;
    await assertCanIngest({ caller, access: () => (access ??= loadAccess(registry, caller)) });
    return callerKey(caller);
  };
}

export interface OtlpGrpcServer {
  port: number;
  /** Connections open now. */
  connections(): number;
  close(): Promise<void>;
}

export interface OtlpGrpcOptions {
  config: Pick<Config, 'host' | 'requestTimeoutMs' | 'bounds' | 'connections'>;
  /** 0 picks a free port. */
  port: number;
  authenticate: Authenticate;
  /** The registry the caller's right to ingest is read from (the app's). */
  registry: RegistryStore;
  metrics?: Metrics;
}

/** Starts the gRPC services on the configured host and `port` in front of `app`'s routes. */
export async function startOtlpGrpc(app: FastifyInstance, options: OtlpGrpcOptions): Promise<OtlpGrpcServer> {
  const { config } = options;
  const limits = config.connections;
  const closed = (reason: string) => options.metrics?.connectionsClosed.inc({ port: 'grpc', reason });
  const connections = grpcConnections(
    { host: config.host, port: options.port, maxConnections: limits.grpcMax, idleTimeoutMs: limits.idleTimeoutMs },
    {
      closed,
      onError: (err) => app.log.error({ err }, 'the gRPC listener reported an error; still listening'),
    },
  );
  const server = new grpc.Server({
    'grpc.max_receive_message_length': config.bounds.otlpMaxDecompressedBytes,
    'grpc.max_send_message_length': 1024 * 1024,
    'grpc.max_concurrent_streams': MAX_CALLS_PER_CONNECTION,
    'grpc.max_connection_idle_ms': limits.idleTimeoutMs,
    'grpc.max_connection_age_ms': limits.grpcMaxAgeMs,
    // Calls admitted before the GOAWAY may still receive (receive deadline) and be answered (request deadline).
    'grpc.max_connection_age_grace_ms': 2 * config.requestTimeoutMs + 1000,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    interceptors: [
      callGuard({
        authorize: ingestAuthorizer(options.authenticate, options.registry),
        callsPerCaller: limits.grpcCallsPerCaller,
        receiveTimeoutMs: config.requestTimeoutMs,
        connections,
        onError: (err) => app.log.error({ err }, 'the gRPC call guard failed'),
      }),
    ],
  });
  for (const [signal, service] of Object.entries(SERVICES) as [keyof typeof SERVICES, string][]) {
    server.addService(definition(service), { Export: exportHandler(app, signal) });
  }
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const port = await connections.listen((socket) => {
    injector.injectConnection(socket);
  });
  return {
    port,
    connections: () => connections.count(),
    close: async () => {
      await connections.close();
      await new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
      });
    },
  };
}
