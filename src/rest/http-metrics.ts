/**
 * HTTP metrics (DESIGN §11): every answer counted and timed in Prometheus by method, route template
 * and status, every 5xx logged with its trace id, and the exposition at GET /metrics.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../observability/metrics.ts';
import { metricsTokenCheck } from './metrics-token.ts';

export interface HttpMetricsOptions {
  metrics: Metrics;
  /** When set, GET /metrics needs this bearer token (metrics-token.ts). */
  metricsToken?: string | undefined;
}

export function installHttpMetrics(app: FastifyInstance, options: HttpMetricsOptions): void {
  const { metrics } = options;
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

  const checkMetricsToken = metricsTokenCheck(options.metricsToken);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    checkMetricsToken(request.headers.authorization);
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
