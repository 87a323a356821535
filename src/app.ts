/**
 * buildApp: the Fastify instance with every route, hook and error mapping, never listening, so
 * tests drive it with inject() or listen on an ephemeral port themselves. main.ts owns the process.
 */
import crypto from 'node:crypto';
import type { Duplex } from 'node:stream';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import swagger from '@fastify/swagger';
import type { Authenticator } from './auth/caller.ts';
import { createContext, type RequestContext, type Services } from './context.ts';
import { ApiError, isApiError, toProblem } from './errors.ts';
import { installValidation } from './rest/validation.ts';
import { StoreUnavailableError } from './store/registry-port.ts';
import { problemSchema } from './rest/schemas/problems.ts';
import { createMetrics, type Metrics } from './observability/metrics.ts';
import { watchStoredBytes } from './observability/stored-bytes.ts';
import { registerHealthRoutes } from './rest/health.ts';
import { registerConsoleRoutes } from './rest/console-routes.ts';
import { guardHttpConnections } from './rest/connections.ts';
import { installHttpMetrics } from './rest/http-metrics.ts';
import { installLoadShedding } from './rest/load-shedding.ts';
import { installRequestDeadline, startDeadline } from './rest/request-deadline.ts';
import { installRateLimit } from './rest/rate-limit.ts';
import { RateLimits } from './rate-limits.ts';
import { IngestQuotas } from './otlp/ingest-quotas.ts';
import { InProcessRateLimiter } from './store/memory/rate-limiter.ts';
import type { RateLimiter } from './store/rate-limit-port.ts';
import { installResponseCache } from './rest/response-cache.ts';
import { registerAgentRoutes } from './rest/agent-routes.ts';
import { registerDiscoveryRoutes } from './rest/discovery-routes.ts';
import { baseUrlOf } from './shared/base-url.ts';
import { registerRegistryRoutes } from './rest/registry-routes.ts';
import { registerToolRoutes } from './rest/tool-routes.ts';
import { registerTraceRoutes } from './rest/trace-routes.ts';
import { registerInsightRoutes } from './rest/insight-routes.ts';
import { registerInsightSettingsRoutes } from './rest/insight-settings-routes.ts';
import { registerOtlpReceiver, type OtlpFaults } from './rest/otlp-routes.ts';
import { registerMcpRegistryRoutes } from './rest/mcp-registry-routes.ts';
import { registerGraphql, type GraphqlOptions } from './graphql/server.ts';
import { parseWellFormedJson } from './shared/well-formed.ts';

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

/**
 * What the app is built from. The app owns it: `app.close()` closes, after every plugin has stopped,
 * the authenticator, the rate limiter, the APQ cache, the trace store and the registry store, so the
 * process entry and the tests share one shutdown.
 */
export interface AppOptions {
  services: Services;
  authenticator: Authenticator;
  /** Pino options or false; tests pass false. */
  logger?: boolean | object;
  /** One per process in production; a fresh registry otherwise. */
  metrics?: Metrics;
  /** Shared counters for several replicas; in-process counters otherwise. */
  rateLimiter?: RateLimiter;
  /** Shared store of GraphQL automatic persisted queries (Redis in server mode); in-memory otherwise. */
  apqCache?: NonNullable<GraphqlOptions['apqCache']> & { close?(): unknown };
  /** Failures the OTLP receiver answers after a commit (tests of exporters' retries; never configured). */
  otlpFaults?: OtlpFaults;
}

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

const ZERO_TRACE_ID = '0'.repeat(32);
/** Random bytes for 256 trace ids: one system call per 256 requests instead of one each. */
const idPool = Buffer.alloc(16 * 256);
let idPoolUsed = idPool.length;

function freshTraceId(): string {
  if (idPoolUsed === idPool.length) {
    crypto.randomFillSync(idPool);
    idPoolUsed = 0;
  }
  const id = idPool.toString('hex', idPoolUsed, idPoolUsed + 16);
  idPoolUsed += 16;
  return id === ZERO_TRACE_ID ? freshTraceId() : id;
}

/** The W3C trace id of a request: from `traceparent` when valid, else a fresh one. */
function traceIdOf(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  const m = value === undefined ? null : TRACEPARENT.exec(value.trim().toLowerCase());
  if (m && m[1] !== ZERO_TRACE_ID) return m[1] as string;
  return freshTraceId();
}

function sendProblem(reply: FastifyReply, err: ApiError, traceId: string | null): FastifyReply {
  if (err.extras.retryAfter !== undefined) reply.header('retry-after', String(err.extras.retryAfter));
  return reply.code(err.status).type('application/problem+json').send(toProblem(err, traceId));
}

/** Maps anything thrown during a request to a catalogue error; never leaks internals. */
function toApiError(err: FastifyError | Error): ApiError {
  if (isApiError(err)) return err;
  if (err instanceof StoreUnavailableError)
    return new ApiError('service_unavailable', 'the registry store is unavailable; retry later', { retryAfter: 5 });
  const e = err as FastifyError;
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new ApiError('unsupported_content_type', 'the request body must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('invalid_request', 'the request body is too large');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'a JSON object body is required');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'content-length does not match the body');
    default:
      break;
  }
  if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError('invalid_request', 'the request could not be processed');
  }
  return new ApiError('internal_error', 'an internal error occurred');
}

/**
 * Rejections Fastify makes before routing (a path parameter over the router's length, a bad
 * percent-encoding) answered as problems with a trace id, like every other error (DESIGN §7).
 */
function frameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiErr =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError('invalid_request', `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`)
      : err.code === 'FST_ERR_BAD_URL'
        ? new ApiError('invalid_request', 'the URL path has an invalid percent-encoding')
        : toApiError(err);
  if (apiErr.status >= 500) request.log.error({ err }, 'request failed');
  void sendProblem(reply, apiErr, request.id);
}

/**
 * Requests Node's HTTP parser refuses (malformed request line or headers, headers too large, or not
 * received within the headers or request timeout) never reach Fastify: they get a problem body
 * too, with a fresh trace id, and the connection is closed.
 */
function clientError(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const detail =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 'the HTTP request was not received in time'
      : 'the HTTP request is malformed or its headers are too large';
  const problem = JSON.stringify(toProblem(new ApiError('invalid_request', detail), traceIdOf(undefined)));
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(problem)}\r\nConnection: close\r\n\r\n${problem}`,
  );
}

const MAX_PARAM_LENGTH = 500;

/**
 * A JSON request body. A lone UTF-16 surrogate that a `\u` escape names (JSON.parse keeps it) is
 * read as U+FFFD, the text every store keeps: what is compared, stored and answered is one text.
 */
function parseJsonBody(_req: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void): void {
  if (body.length === 0) {
    done(null, undefined);
    return;
  }
  try {
    done(null, parseWellFormedJson(body));
  } catch {
    done(new ApiError('invalid_json', 'the request body is not valid JSON'));
  }
}

/** How often Node checks the headers and request timeouts: a tenth of the deadline, 10 ms to 1 s. */
const checkEveryMs = (deadlineMs: number) => Math.min(1000, Math.max(10, Math.floor(deadlineMs / 10)));

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services, authenticator } = options;
  const { connections } = services.config;
  const requestBytesTimeoutMs = services.config.requestTimeoutMs + 10_000;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: services.config.bodyLimitBytes,
    genReqId: (req) => traceIdOf(req.headers.traceparent),
    logController: new LogController({ requestIdLogLabel: 'trace_id' }),
    return503OnClosing: true,
    // Socket-level bounds, so slow or silent clients cannot hold connections (DESIGN §7, §11):
    // headers within the request deadline, the whole request within it + 10 s (both checked every
    // checkEveryMs), a silent connection closed after IDLE_TIMEOUT_MS (rest/connections.ts), an
    // idle keep-alive one after 5 s.
    connectionTimeout: connections.idleTimeoutMs,
    requestTimeout: requestBytesTimeoutMs,
    keepAliveTimeout: 5_000,
    http: {
      headersTimeout: services.config.requestTimeoutMs,
      requestTimeout: requestBytesTimeoutMs,
      connectionsCheckingInterval: checkEveryMs(services.config.requestTimeoutMs),
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
  });
  const metrics = options.metrics ?? services.metrics ?? createMetrics({ defaultMetrics: false });
  guardHttpConnections(
    app.server,
    {
      maxConnections: connections.httpMax,
      idleTimeoutMs: connections.idleTimeoutMs,
      busyGraceMs: requestBytesTimeoutMs,
    },
    {
      closed: (reason) => metrics.connectionsClosed.inc({ port: 'http', reason }),
      onError: (err) => app.log.error({ err }, 'the HTTP listener reported an error; still listening'),
    },
  );
  // onClose hooks run last-registered first: this one runs after every plugin's own (GraphQL, OTLP pool).
  app.addHook('onClose', async () => {
    await authenticator.close?.();
    await options.rateLimiter?.close?.();
    await options.apqCache?.close?.();
    await services.traces.close();
    await services.registry.close();
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  app.addContentTypeParser(/^application\/[\w.+-]+\+json$/, { parseAs: 'string' }, parseJsonBody);
  installValidation(app);
  app.decorateRequest('ctx', null as unknown as RequestContext);

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) request.log.error({ err }, 'request failed');
    return sendProblem(reply, apiErr, request.id);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      new ApiError('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
      request.id,
    ),
  );

  app.addSchema(problemSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent, Skill and Registry Gateway',
        version: '1.0.0',
        description:
          'REST v1 API and the OTLP/HTTP trace receiver. Every operation needs `Authorization: Bearer <credential>`, ' +
          'where the credential is a JWT of a trusted issuer or an agent API key (`agk_…`).',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'this gateway' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT or API key',
            description: 'A JWT (user or client-credentials token) of a trusted issuer, or an agent API key',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });

  // Handlers count into the metrics /metrics exposes, whichever way they were given.
  const counted: Services = { ...services, metrics };
  watchStoredBytes(metrics, services);
  installRequestDeadline(app);
  // W3C trace context: every response names the request's trace (taken from `traceparent` or new).
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('traceparent', `00-${request.id}-${request.id.slice(0, 16)}-01`);
    return payload;
  });
  installLoadShedding(app, { maxEventLoopDelayMs: services.config.maxEventLoopDelayMs });
  installHttpMetrics(app, { metrics, metricsToken: services.config.metricsToken });
  registerHealthRoutes(app, services);
  registerConsoleRoutes(app, { explorer: services.config.graphqlExplorer });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const limiter = options.rateLimiter ?? new InProcessRateLimiter();
  const rateLimits = new RateLimits(limiter, services.config.rateLimit.perMinute, {
    'webhooks.create': services.config.webhooks.creationsPerMinute,
  });
  const ingestQuotas = new IngestQuotas(limiter, services.config.ingestQuotas);
  // Its own scope: its reads may come without credentials (MCP_REGISTRY_PUBLIC_WORKSPACES).
  await registerMcpRegistryRoutes(app, { services: counted, authenticator, rateLimits, ingestQuotas, toApiError });
  // Everything registered in this scope needs a caller.
  await app.register(async (api) => {
    api.addHook('onRequest', async (request, reply) => {
      const deadline = startDeadline(request, reply, services.config.requestTimeoutMs);
      const caller = await authenticator.authenticate(request.headers.authorization);
      const baseUrl = () => baseUrlOf(services.config.publicBaseUrl, request.headers.host);
      request.ctx = createContext(counted, caller, request.id, deadline, rateLimits, ingestQuotas, baseUrl);
    });
    installRateLimit(api);
    installResponseCache(api, {
      maxEntries: services.config.responseCacheEntries,
      maxBytes: services.config.responseCacheBytes,
    });
    registerAgentRoutes(api);
    registerDiscoveryRoutes(api);
    registerToolRoutes(api);
    registerRegistryRoutes(api);
    registerTraceRoutes(api);
    registerInsightRoutes(api);
    registerInsightSettingsRoutes(api);
    registerOtlpReceiver(
      api,
      { ...services.config.bounds, retentionDays: services.config.traceRetentionDays },
      options.otlpFaults,
    );
    await registerGraphql(api, services, {
      toApiError,
      ...(options.apqCache !== undefined ? { apqCache: options.apqCache } : {}),
    });
  });

  return app;
}
