/**
 * INSIGHT_RETENTION_DAYS (default 90; 0 keeps everything; docs/insights.md): insights whose window
 * ended more than that many days before detection's latest step (`lagS` behind the clock) are
 * deleted, with the webhook deliveries still owed for them (InsightStore.pruneInsights), at start
 * and then every hour. A run deletes in
 * batches of `batch` insights, one short transaction each, and at most `maxBatches` of them: a
 * larger backlog is finished by the next runs, never by one long transaction; the event loop turns
 * between batches (SQLite answers synchronously: otherwise no request would run between them).
 * With several replicas the one holding the retention lease runs it (renewed before each batch);
 * batches at once would be safe all the same. What is deleted is counted in /metrics
 * (gateway_insights_pruned_total). A failed run is logged and retried at the next hour; it never
 * stops the service.
 */
import { randomUUID } from 'node:crypto';
import type { Counter } from 'prom-client';
import type { InsightStore } from '../store/insight-port.ts';

const RETENTION_EVERY_MS = 3_600_000;
const LEASE = 'insight-retention';
const LEASE_MS = 600_000;

export interface InsightRetentionDeps {
  insights: Pick<InsightStore, 'pruneInsights' | 'tryLease'>;
  days: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Counts the insights deleted. */
  pruned?: Counter;
  /** Insights per batch (default 500) and batches per run (default 200). */
  batch?: number;
  maxBatches?: number;
  /**
   * How far behind the clock detection's latest step is (its settle delay and a step; default 0):
   * the cutoff moves back by it, so the cooldown of the step being computed still finds every
   * insight of its series younger than the longest cooldown.
   */
  lagS?: number;
  /** This replica's name in the lease (default: a random id). */
  holder?: string;
  now?: () => number;
}

export interface InsightRetention {
  /**
   * One run now, after the one in progress (runs never overlap in a process); resolves with the
   * insights it deleted (0 when another replica holds the lease).
   */
  run(): Promise<number>;
  /** No further runs by the clock, and a run under way ends after its batch (the stores close next). */
  stop(): void;
}

export function startInsightRetention(deps: InsightRetentionDeps): InsightRetention {
  if (deps.days === 0) return { run: async () => 0, stop: () => undefined };
  const { insights, days, log } = deps;
  const now = deps.now ?? Date.now;
  const holder = deps.holder ?? randomUUID();
  const batch = deps.batch ?? 500;
  const maxBatches = deps.maxBatches ?? 200;
  /** Calls of stop(): a run ends after the batch under way when it moves. */
  let stops = 0;
  const once = async (): Promise<number> => {
    const began = stops;
    const cutoffS = Math.floor(now() / 1000) - days * 86400 - (deps.lagS ?? 0);
    let deleted = 0;
    try {
      for (let n = 0; n < maxBatches && stops === began; n++) {
        if (!(await insights.tryLease(LEASE, holder, now(), LEASE_MS))) break;
        const gone = await insights.pruneInsights(cutoffS, batch);
        deleted += gone;
        deps.pruned?.inc(gone);
        if (gone < batch) break;
        if (n === maxBatches - 1)
          log.info({ deleted, cutoffS }, 'insight retention: more to delete, continued at the next run');
        // SQLite answers within the same macrotask: without a turn of the event loop between batches,
        // a run of 200 held every request back for seconds (100,000 insights: 3.6 s).
        else await new Promise((resolve) => setImmediate(resolve));
      }
      if (deleted > 0)
        log.info({ insights: deleted, cutoffS, days }, 'insight retention: deleted insights before the cutoff');
    } catch (err) {
      log.warn({ err, cutoffS, deleted }, 'insight retention failed; retried in an hour');
    }
    return deleted;
  };
  let last: Promise<number> = Promise.resolve(0);
  const run = (): Promise<number> => (last = last.then(once, once));
  void run();
  const timer = setInterval(() => void run(), RETENTION_EVERY_MS);
  timer.unref();
  return {
    run,
    stop: () => {
      stops++;
      clearInterval(timer);
    },
  };
}
