/** Opens the trace engine the configuration selects (DESIGN §4); embedded DuckDB runs in its own thread. */
import path from 'node:path';
import type { Config } from '../config.ts';
import { ThreadedTraceStore } from './duckdb/threaded-store.ts';
import { openPostgresTraces } from './postgres/open.ts';
import type { TraceStore } from './trace-port.ts';

export async function openTraceStore(config: Config): Promise<TraceStore> {
  if (config.databaseUrl !== undefined) return openPostgresTraces(config);
  return ThreadedTraceStore.open(path.join(config.dataDir, 'traces.duckdb'));
}
