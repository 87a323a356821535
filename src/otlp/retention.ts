/**
 * TRACE_RETENTION_DAYS (default 30; 0 keeps everything): the trace store is pruned
 * (TraceStore.pruneBefore) at start and then every hour, of what started more than that many days
 * before the run, so that the store holds at most that many days of the ingestion quotas' bytes.
 * Stores with several replicas prune under a lock, so each run is done by one of them. A failed run
 * is reported and retried at the next hour; it never stops the service.
 */
import type { TraceStore } from '../store/trace-port.ts';

const RETENTION_EVERY_MS = 3_600_000;

export interface Retention {
  /** One run now; resolves with the spans deleted. */
  run(): Promise<number>;
  stop(): void;
}

export function startRetention(
  traces: TraceStore,
  days: number,
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void },
  now: () => number = Date.now,
): Retention {
  if (days === 0) return { run: async () => 0, stop: () => undefined };
  const run = async (): Promise<number> => {
    const cutoffS = Math.floor(now() / 1000) - days * 86400;
    try {
      const spans = await traces.pruneBefore(cutoffS);
      if (spans > 0) log.info({ spans, cutoffS, days }, 'trace retention: deleted spans before the cutoff');
      return spans;
    } catch (err) {
      log.warn({ err, cutoffS }, 'trace retention failed; retried in an hour');
      return 0;
    }
  };
  void run();
  const timer = setInterval(() => void run(), RETENTION_EVERY_MS);
  timer.unref();
  return { run, stop: () => clearInterval(timer) };
}
