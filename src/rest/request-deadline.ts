/**
 * The operating contract of every request (DESIGN §7, §11): the request deadline (504
 * `request_timeout`, store work cancelled through the context's signal), load shedding (503
 * `service_overloaded` with Retry-After), and Prometheus metrics per route and status.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toProblem } from '../errors.ts';
import type { Metrics } from '../observability/metrics.ts';
import { timeoutError, type Deadline } from '../shared/deadline.ts';
import { metricsTokenCheck } from './metrics-token.ts';
import { installLoadShedding } from './load-shedding.ts';

declare module 'fastify' {
  interface FastifyRequest {
    deadline: Deadline | null;
  }
}

/**
 * Starts the deadline of a request: at `timeoutMs` the signal aborts (stores cancel their work)
 * and, unless a response is already on its way or the request's write has begun, the client gets
 * 504 request_timeout. Work that holds the event loop past the deadline cannot be interrupted by
 * the timer: handlers check `Deadline.at` between steps, and the answer is checked once more
 * before it is serialized.
 */
export function startDeadline(request: FastifyRequest, reply: FastifyReply, timeoutMs: number): Deadline {
  const controller = new AbortController();
  let writing = false;
  const deadline: Deadline = {
    signal: controller.signal,
    at: Date.now() + timeoutMs,
    timeoutMs,
    answerAfterWrite: () => {
      writing = true;
    },
  };
  request.deadline = deadline;
  const timer = setTimeout(() => {
    controller.abort(timeoutError(timeoutMs));
    // A write under way answers for itself once it has committed, or not (see Deadline).
    if (!writing && !reply.sent && !reply.raw.headersSent) {
      // Serialized here: the check before serializing would refuse this late answer again.
      reply
        .code(504)
        .type('application/problem+json')
        .send(JSON.stringify(toProblem(timeoutError(timeoutMs), request.id)));
    }
  }, timeoutMs);
  timer.unref();
  reply.raw.once('close', () => clearTimeout(timer));
  return deadline;
}

/** 504 request_timeout instead of a success built past the deadline, before it is serialized. */
function checkBeforeSerializing(request: FastifyRequest, reply: FastifyReply): void {
  const d = request.deadline;
  if (d !== null && reply.statusCode < 300 && (d.signal.aborted || Date.now() >= d.at)) throw timeoutError(d.timeoutMs);
}

export interface OperatingOptions {
  metrics: Metrics;
  /** Event-loop delay above which new requests are shed. */
  maxEventLoopDelayMs: number;
  /** When set, GET /metrics needs this bearer token (metrics-token.ts). */
  metricsToken?: string | undefined;
}

export async function installOperating(app: FastifyInstance, options: OperatingOptions): Promise<void> {
  const { metrics } = options;
  app.decorateRequest('deadline', null);
  app.addHook('preSerialization', async (request, reply, payload) => {
    checkBeforeSerializing(request, reply);
    return payload;
  });

  // W3C trace context: every response names the request's trace (taken from `traceparent` or new).
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('traceparent', `00-${request.id}-${request.id.slice(0, 16)}-01`);
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    // Every 5xx is in the log with its trace id (the request logger carries it), whichever path sent
    // it: the error handler (which also logs the cause), the deadline, load shedding, GraphQL.
    if (reply.statusCode >= 500)
      request.log.warn({ status: reply.statusCode, route: labels.route }, 'answered with a server error');
  });

  installLoadShedding(app, { maxEventLoopDelayMs: options.maxEventLoopDelayMs });

  const checkMetricsToken = metricsTokenCheck(options.metricsToken);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    checkMetricsToken(request.headers.authorization);
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
