/** Opens the PostgreSQL engines (server mode), applying their migrations first. */
import type { Config } from '../../config.ts';
import type { ReadyProgress } from '../../shared/api-document.ts';
import type { RegistryStore } from '../registry-port.ts';
import { migrate } from './migrate.ts';
import { refreshReadyDocuments } from './ready-documents.ts';
import { createPool } from './pool.ts';
import { PostgresRegistryStore } from './registry-store.ts';
import { PostgresTraceStore, type PostgresTraceOptions } from './trace-store.ts';
import { sqlNumber } from '../sql-values.ts';

export async function openPostgresRegistry(
  config: Pick<Config, 'databaseUrl' | 'requestTimeoutMs'>,
  schema = 'public',
  progress?: ReadyProgress,
): Promise<RegistryStore> {
  if (config.databaseUrl === undefined) throw new Error('DATABASE_URL is not set');
  const pool = createPool({ url: config.databaseUrl, schema, statementTimeoutMs: config.requestTimeoutMs });
  try {
    await migrate(pool, 'registry', schema);
    await refreshReadyDocuments(pool, progress);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return new PostgresRegistryStore(pool);
}

export async function openPostgresTraces(
  config: Pick<Config, 'databaseUrl' | 'requestTimeoutMs'>,
  schema = 'public',
  options: PostgresTraceOptions = {},
): Promise<PostgresTraceStore> {
  if (config.databaseUrl === undefined) throw new Error('DATABASE_URL is not set');
  const pool = createPool({ url: config.databaseUrl, schema, statementTimeoutMs: config.requestTimeoutMs });
  let rows: number;
  try {
    await migrate(pool, 'traces', schema);
    // The planner's estimate of the table's size: "grown by a tenth" counts from it after a restart.
    const estimate = await pool.query<{ n: string }>(
      "SELECT GREATEST(reltuples, 0)::bigint AS n FROM pg_class WHERE oid = 'spans'::regclass",
    );
    rows = sqlNumber(estimate.rows[0]?.n);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const store = new PostgresTraceStore(pool, rows, options);
  try {
    await store.maintainPartitions();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
