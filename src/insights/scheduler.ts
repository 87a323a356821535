/**
 * Insight detection on a schedule (DETECTION_* in config.ts; docs/insights.md): every
 * `intervalMs`, the replica holding the detection lease (InsightStore.tryLease, renewed before
 * each organization, each step and each step's writes; others skip their turn, and a replica that
 * lost it stops at the next of these) runs each organization with a skill or agent trace
 * in the last eight days (run-organization.ts), one after the other, each bounded in steps and
 * subjects. What it costs and finds is counted in /metrics (DetectionMetrics). A run that fails is
 * logged and the next interval tries again; it never stops the service.
 */
import { randomUUID } from 'node:crypto';
import type { DetectionMetrics } from '../observability/detection-metrics.ts';
import type { InsightStore, OutboxBound } from '../store/insight-port.ts';
import type { DetectionState } from '../store/detection-state-port.ts';
import type { EvaluationFactsReader, SubjectFactsReader } from '../store/facts-port.ts';
import { BASELINE_S, WINDOW_S } from './rules.ts';
import type { DetectionConfig } from '../config-detection.ts';
import { runOrganization, type OrgRun } from './run-organization.ts';

export interface DetectionDeps {
  traces: SubjectFactsReader;
  insights: InsightStore;
  /** The registry's agents of an organization and detection's page positions (the registry store's). */
  state: DetectionState;
  /** Evaluation scores (the trace store): `evaluation_drop` is found from them. */
  evaluations: EvaluationFactsReader;
  config: DetectionConfig;
  /** What an organization may owe the webhook outbox (webhooks/start.ts `outboxBound`). */
  outbox?: OutboxBound;
  metrics?: DetectionMetrics;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** This replica's name in the lease (default: a random id). */
  holder?: string;
  now?: () => number;
}

interface DetectionRun {
  /** False when another replica holds the lease (nothing was done). */
  leader: boolean;
  orgs: OrgRun[];
}

export interface Detection {
  /** One run now (waits for a run in progress to end first). */
  runOnce(): Promise<DetectionRun>;
  stop(): void;
}

const LEASE = 'insight-detection';
/** Organizations one run examines at most (ordered by id): a bound on the list, far above any registry's. */
const MAX_ORGS = 10_000;

export function startDetection(deps: DetectionDeps): Detection {
  const holder = deps.holder ?? randomUUID();
  const now = deps.now ?? Date.now;
  const { config, metrics } = deps;
  // The lease outlives a slow step; it is renewed before each organization and each step, and
  // before a step's insights are written: a replica that lost it stops there (run-organization.ts).
  const ttlMs = Math.max(2 * config.intervalMs, 600_000);
  let running: Promise<DetectionRun> | null = null;

  const once = async (): Promise<DetectionRun> => {
    if (!(await deps.insights.tryLease(LEASE, holder, now(), ttlMs))) {
      metrics?.runs.inc({ outcome: 'not_leader' });
      return { leader: false, orgs: [] };
    }
    const sinceS = Math.floor(now() / 1000) - WINDOW_S - BASELINE_S;
    const orgs: OrgRun[] = [];
    for (const orgId of await deps.traces.activeOrganizations(sinceS, MAX_ORGS)) {
      if (!(await deps.insights.tryLease(LEASE, holder, now(), ttlMs))) break;
      const stop = metrics?.orgDuration.startTimer();
      const run = await runOrganization(
        {
          traces: deps.traces,
          insights: deps.insights,
          state: deps.state,
          evaluations: deps.evaluations,
          bounds: config,
          nowMs: now(),
          outbox: deps.outbox,
          holdsLease: () => deps.insights.tryLease(LEASE, holder, now(), ttlMs),
        },
        orgId,
      );
      stop?.();
      orgs.push(run);
      if (run.ignoredSettings.length > 0)
        deps.log.warn(
          { orgId, ignored: run.ignoredSettings },
          'insight detection: overrides that no longer check were ignored',
        );
      if (metrics !== undefined) count(metrics, run);
      if (run.leaseLost) break;
    }
    const lags = orgs.flatMap((o) => (o.cursorS === null ? [] : [now() / 1000 - o.cursorS]));
    metrics?.lag.set(lags.length === 0 ? 0 : Math.max(...lags));
    metrics?.runs.inc({ outcome: 'ok' });
    return { leader: true, orgs };
  };

  const runOnce = async (): Promise<DetectionRun> => {
    while (running !== null) await running.catch(() => undefined);
    running = once();
    try {
      return await running;
    } catch (err) {
      metrics?.runs.inc({ outcome: 'error' });
      throw err;
    } finally {
      running = null;
    }
  };

  if (!config.enabled) return { runOnce, stop: () => undefined };
  const tick = () => {
    if (running !== null) return;
    runOnce().then(
      (run) => {
        const found = run.orgs.reduce((n, o) => n + Object.values(o.found).reduce((a, b) => a + b, 0), 0);
        if (found > 0) deps.log.info({ orgs: run.orgs.length, found }, 'insight detection: insights found');
      },
      (err: unknown) => deps.log.warn({ err }, 'insight detection failed; retried at the next interval'),
    );
  };
  // A first run at start, then every interval.
  const first = setTimeout(tick, 0);
  const timer = setInterval(tick, config.intervalMs);
  first.unref();
  timer.unref();
  return {
    runOnce,
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}

function count(metrics: DetectionMetrics, run: OrgRun): void {
  metrics.steps.inc(run.steps);
  for (const [type, n] of Object.entries(run.examined)) metrics.subjects.inc({ type }, n);
  metrics.truncatedSteps.inc(run.truncatedSteps);
  for (const [kind, n] of Object.entries(run.found)) metrics.insights.inc({ kind }, n);
}
