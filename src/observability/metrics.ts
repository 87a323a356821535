/**
 * Prometheus metrics of one service instance (`GET /metrics`). Each app gets its own registry, so
 * tests building several apps in one process do not collide.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  storeDuration: Histogram<'store' | 'method' | 'outcome'>;
  spansIngested: Counter<'outcome'>;
  telemetryRecords: Counter<'signal' | 'outcome'>;
  jwksRefreshes: Counter<'outcome'>;
  connectionsClosed: Counter<'port' | 'reason'>;
  detection: DetectionMetrics;
}

/**
 * What insight detection costs and finds (src/insights/scheduler.ts). No label names an
 * organization (their number is not bounded); a run's organizations are summed, its duration is
 * observed per organization.
 */
export interface DetectionMetrics {
  runs: Counter<'outcome'>;
  orgDuration: Histogram;
  steps: Counter;
  subjects: Counter<'type'>;
  truncatedSteps: Counter;
  insights: Counter<'kind'>;
  lag: Gauge;
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
  };
}

function detectionMetrics(registry: Registry): DetectionMetrics {
  return {
    runs: new Counter({
      name: 'gateway_insight_detection_runs_total',
      help: 'Insight detection runs by outcome (ok; not_leader: another replica holds the lease; error)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    orgDuration: new Histogram({
      name: 'gateway_insight_detection_org_run_seconds',
      help: "Time one detection run spent on one organization's steps",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    steps: new Counter({
      name: 'gateway_insight_detection_steps_total',
      help: 'Hourly detection steps done, summed over organizations',
      registers: [registry],
    }),
    subjects: new Counter({
      name: 'gateway_insight_detection_subjects_total',
      help: 'Subjects whose facts detection read, by type (skill, agent, evaluation)',
      labelNames: ['type'],
      registers: [registry],
    }),
    truncatedSteps: new Counter({
      name: 'gateway_insight_detection_truncated_steps_total',
      help: 'Steps that had more subjects than DETECTION_MAX_SUBJECTS of a type (the rest were not examined)',
      registers: [registry],
    }),
    insights: new Counter({
      name: 'gateway_insights_found_total',
      help: 'Insights detection stored (new ids only), by kind',
      labelNames: ['kind'],
      registers: [registry],
    }),
    lag: new Gauge({
      name: 'gateway_insight_detection_lag_seconds',
      help: "After the last run: the most time between now and an organization's last detected step",
      registers: [registry],
    }),
  };
}

/**
 * Wraps a store so every async port method is timed. Methods are wrapped once, on first use;
 * properties that are not functions pass through.
 */
export function instrumentStore<T extends object>(store: T, name: string, metrics: Metrics): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || prop === 'constructor') return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        const method = String(prop);
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
