/** Opens the trace engine the configuration selects (DESIGN §4). */
import path from 'node:path';
import type { Config } from '../config.ts';
import { DuckDbTraceStore } from './duckdb/trace-store.ts';
import { openPostgresTraces } from './postgres/open.ts';
import type { TraceStore } from './trace-port.ts';

export async function openTraceStore(config: Config): Promise<TraceStore> {
  if (config.databaseUrl !== undefined) return openPostgresTraces(config);
  return DuckDbTraceStore.open(path.join(config.dataDir, 'traces.duckdb'));
}
