/**
 * What insight detection costs and finds (src/insights/scheduler.ts), in /metrics. No label names
 * an organization (their number is not bounded): a run's organizations are summed, and its time is
 * observed per organization.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface DetectionMetrics {
  runs: Counter<'outcome'>;
  orgDuration: Histogram;
  steps: Counter;
  subjects: Counter<'type'>;
  truncatedSteps: Counter;
  insights: Counter<'kind'>;
  lag: Gauge;
  /** Insights deleted by retention (src/insights/retention.ts). */
  pruned: Counter;
}

export function detectionMetrics(registry: Registry): DetectionMetrics {
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
    pruned: new Counter({
      name: 'gateway_insights_pruned_total',
      help: 'Insights deleted by retention (INSIGHT_RETENTION_DAYS), with the webhook deliveries owed for them',
      registers: [registry],
    }),
  };
}
