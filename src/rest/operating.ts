/**
 * The operating contract of every request (DESIGN §7, §11): the request deadline (504
 * `request_timeout`, store work cancelled through the context's signal), load shedding (503
 * `service_overloaded` with Retry-After), and Prometheus metrics per route and status.
 */
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, toProblem } from '../errors.ts';
import type { Metrics } from '../observability/metrics.ts';

declare module 'fastify' {
  interface FastifyRequest {
    deadline: AbortController | null;
  }
}

/**
 * Starts the deadline of a request: at `timeoutMs` the signal aborts (stores cancel their work)
 * and, unless a response is already on its way, the client gets 504 request_timeout.
 */
export function startDeadline(request: FastifyRequest, reply: FastifyReply, timeoutMs: number): AbortSignal {
  const controller = new AbortController();
  request.deadline = controller;
  const timer = setTimeout(() => {
    controller.abort(new ApiError('request_timeout', `the request took longer than ${timeoutMs} ms`));
    if (!reply.sent && !reply.raw.headersSent) {
      const err = new ApiError('request_timeout', `the request took longer than ${timeoutMs} ms`);
      reply.code(504).type('application/problem+json').send(toProblem(err, request.id));
    }
  }, timeoutMs);
  timer.unref();
  reply.raw.once('close', () => clearTimeout(timer));
  return controller.signal;
}

export interface OperatingOptions {
  metrics: Metrics;
  /** Event-loop delay above which new requests are shed. */
  maxEventLoopDelayMs: number;
}

export async function installOperating(app: FastifyInstance, options: OperatingOptions): Promise<void> {
  const { metrics } = options;
  app.decorateRequest('deadline', null);

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
  });

  await app.register(underPressure, {
    maxEventLoopDelay: options.maxEventLoopDelayMs,
    retryAfter: 5,
    exposeStatusRoute: false,
    pressureHandler: (request, reply, type, value) => {
      const err = new ApiError('service_overloaded', `the service is overloaded (${type} ${String(value)}); retry later`, { retryAfter: 5 });
      reply.code(503).header('retry-after', '5').type('application/problem+json').send(toProblem(err, request.id));
    },
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
