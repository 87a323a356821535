/** Opens the trace engine the configuration selects (DESIGN §4); embedded DuckDB runs in its own thread. */
import path from 'node:path';
import type { Config } from '../config.ts';
import { ThreadedTraceStore } from './duckdb/threaded-store.ts';
import { openPostgresTraces } from './postgres/open.ts';
import type { TraceStore } from './trace-port.ts';

/** PostgreSQL when DATABASE_URL is set, else DuckDB in DATA_DIR with the memory bounds of `config.traceEngine`. */
export async function openTraceStore(config: Config): Promise<TraceStore> {
  if (config.databaseUrl !== undefined) return openPostgresTraces(config);
  const { dictionaryValues, memoryLimitMb, identityKeys } = config.traceEngine;
  return ThreadedTraceStore.open(path.join(config.dataDir, 'traces.duckdb'), {
    dictionaryValues,
    memoryLimitMb,
    identityMaxKeys: identityKeys,
  });
}
