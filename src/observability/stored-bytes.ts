/**
 * `gateway_stored_bytes{store, engine, part}`: what each store holds on disk (store/stored-bytes.ts:
 * the embedded engines' files and WALs, PostgreSQL's tables with indexes and partitions), asked of
 * the stores when Prometheus scrapes. Scrapes arriving together share one question; a store that
 * fails or does not answer within STORE_WAIT_MS leaves its samples out of that scrape instead of
 * failing or holding `/metrics`.
 */
import { Gauge } from 'prom-client';
import type { RegistryStore } from '../store/registry-port.ts';
import type { StoredBytes } from '../store/stored-bytes.ts';
import type { TraceStore } from '../store/trace-port.ts';
import type { Metrics } from './metrics.ts';

const NAME = 'gateway_stored_bytes';
const STORE_WAIT_MS = 2000;

type Labelled = { store: 'registry' | 'traces'; engine: string; bytes: StoredBytes | null };

/** The store's answer, or null when it fails or is later than STORE_WAIT_MS. */
async function answerOf(question: () => Promise<StoredBytes>): Promise<StoredBytes | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), STORE_WAIT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([question().catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Registers the gauge in `metrics` (once per registry: the first app's stores answer it). */
export function watchStoredBytes(metrics: Metrics, stores: { registry: RegistryStore; traces: TraceStore }): void {
  if (metrics.registry.getSingleMetric(NAME) !== undefined) return;
  let asking: Promise<Labelled[]> | null = null;
  const ask = async (): Promise<Labelled[]> => {
    const [registry, traces] = await Promise.all([
      answerOf(() => stores.registry.storedBytes()),
      answerOf(() => stores.traces.storedBytes()),
    ]);
    return [
      { store: 'registry', engine: stores.registry.engine, bytes: registry },
      { store: 'traces', engine: stores.traces.engine, bytes: traces },
    ];
  };
  new Gauge({
    name: NAME,
    help: 'Bytes each store holds on disk, by part: file and wal (SQLite, DuckDB) or table with its indexes and partitions (PostgreSQL)',
    labelNames: ['store', 'engine', 'part'],
    registers: [metrics.registry],
    async collect() {
      asking ??= ask().finally(() => {
        asking = null;
      });
      const answers = await asking;
      this.reset();
      for (const { store, engine, bytes } of answers)
        for (const [part, n] of Object.entries(bytes ?? {})) this.set({ store, engine, part }, n);
    },
  });
}
