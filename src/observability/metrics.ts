/**
 * Prometheus metrics of one service instance (`GET /metrics`). Each app gets its own registry, so
 * tests building several apps in one process do not collide.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { detectionMetrics, type DetectionMetrics } from './detection-metrics.ts';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  storeDuration: Histogram<'store' | 'method' | 'outcome'>;
  spansIngested: Counter<'outcome'>;
  telemetryRecords: Counter<'signal' | 'outcome'>;
  jwksRefreshes: Counter<'outcome'>;
  connectionsClosed: Counter<'port' | 'reason'>;
  webhookDeliveries: Counter<'outcome'>;
  webhookAttemptFailures: Counter<'reason'>;
  webhookPauses: Counter;
  webhookPostponed: Counter;
  webhookNotEnqueued: Counter;
  detection: DetectionMetrics;
}

const GAUGES_NAMED_LIKE_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    // prom-client names three gauges `*_total`, a suffix Prometheus reserves for counters (promtool
    // check metrics fails on them). Their per-type gauges (nodejs_active_handles{type}…) stay.
    for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  }
  return {
    registry,
    detection: detectionMetrics(registry),
    httpRequests: new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    storeDuration: new Histogram({
      name: 'gateway_store_query_duration_seconds',
      help: 'Store calls by store, port method and outcome',
      labelNames: ['store', 'method', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [registry],
    }),
    spansIngested: new Counter({
      name: 'gateway_spans_ingested_total',
      help: 'OTLP spans received, by outcome (stored, duplicate: stored already by an earlier delivery, rejected)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    telemetryRecords: new Counter({
      name: 'gateway_otlp_records_total',
      help: 'OTLP log records and metric data points received, by signal (logs, metrics) and outcome (stored, duplicate: stored already, rejected, ignored: mapped to nothing)',
      labelNames: ['signal', 'outcome'],
      registers: [registry],
    }),
    jwksRefreshes: new Counter({
      name: 'gateway_jwks_refreshes_total',
      help: 'Remote JWKS fetches by outcome (ok, error)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    connectionsClosed: new Counter({
      name: 'gateway_connections_closed_total',
      help: 'Connections the server closed, by port (http, grpc) and reason (over_cap: over the connection cap, closed as accepted; idle; slow_sender: a gRPC message not received by its deadline)',
      labelNames: ['port', 'reason'],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'gateway_webhook_deliveries_total',
      help: 'Webhook deliveries leaving the outbox, by outcome (succeeded: answered 2xx; given_up: still failing when the retry bound ended, its bound ended while its subscription was paused, or its body too large; unauthorized: its subscription creator can no longer read the insight, not sent; dropped: its subscription or insight is gone)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    webhookAttemptFailures: new Counter({
      name: 'gateway_webhook_attempt_failures_total',
      help: 'Failed webhook attempts, by reason (status: not 2xx; timeout; network; refused: the host resolves to an address not allowed; unresolved; too_large)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    webhookPauses: new Counter({
      name: 'gateway_webhook_subscription_pauses_total',
      help: 'Webhook subscription pauses: a subscription is paused once its attempts failed WEBHOOK_PAUSE_AFTER_FAILURES times in a row, and again whenever the attempt after its pause fails',
      registers: [registry],
    }),
    webhookPostponed: new Counter({
      name: 'gateway_webhook_attempts_postponed_total',
      help: 'Webhook attempts that never started, no lookup slot coming free for them (other lookups under way, or past their WEBHOOK_LOOKUP_TIMEOUT_MS): put back a moment later, not counted against their subscription',
      registers: [registry],
    }),
    webhookNotEnqueued: new Counter({
      name: 'gateway_webhook_deliveries_not_enqueued_total',
      help: 'Webhook deliveries not enqueued because their organization owed WEBHOOK_MAX_OWED_PER_ORG already (the insight is stored and listed all the same)',
      registers: [registry],
    }),
  };
}

/**
 * Wraps a store so every async port method is timed. Methods are wrapped once, on first use;
 * properties that are not functions pass through, except the store's parts (`parts`, e.g. the
 * registry's `insights`), whose methods are timed as `part.method`.
 */
export function instrumentStore<T extends object>(
  store: T,
  name: string,
  metrics: Metrics,
  parts: readonly string[] = [],
  prefix = '',
): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof prop === 'string' && parts.includes(prop) && typeof value === 'object' && value !== null) {
        let part = wrapped.get(prop);
        if (part === undefined) {
          part = instrumentStore(value, name, metrics, [], `${prefix}${prop}.`);
          wrapped.set(prop, part);
        }
        return part;
      }
      if (typeof value !== 'function' || prop === 'constructor') return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        const method = `${prefix}${String(prop)}`;
        fn = (...args: unknown[]) => {
          const end = metrics.storeDuration.startTimer({ store: name, method });
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (err) {
            end({ outcome: 'error' });
            throw err;
          }
          if (result instanceof Promise) {
            return (result as Promise<unknown>).then(
              (v) => {
                end({ outcome: 'ok' });
                return v;
              },
              (err: unknown) => {
                end({ outcome: 'error' });
                throw err;
              },
            );
          }
          end({ outcome: 'ok' });
          return result;
        };
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}
