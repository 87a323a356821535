/** Opens the PostgreSQL engines (server mode), applying their migrations first. */
import type pg from 'pg';
import type { Config } from '../../config.ts';
import { readyJson } from '../../shared/api-document.ts';
import type { RegistryStore } from '../registry-port.ts';
import { migrate } from './migrate.ts';
import { createPool } from './pool.ts';
import { PostgresRegistryStore } from './registry-store.ts';
import { PostgresTraceStore, type PostgresTraceOptions } from './trace-store.ts';
import { sqlNumber } from '../sql-values.ts';

export async function openPostgresRegistry(
  config: Pick<Config, 'databaseUrl' | 'requestTimeoutMs'>,
  schema = 'public',
): Promise<RegistryStore> {
  if (config.databaseUrl === undefined) throw new Error('DATABASE_URL is not set');
  const pool = createPool({ url: config.databaseUrl, schema, statementTimeoutMs: config.requestTimeoutMs });
  try {
    await migrate(pool, 'registry', schema);
    await fillApiJson(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return new PostgresRegistryStore(pool);
}

/**
 * Writes `api_json` of rows imported before registry migration 003, a thousand at a time (none
 * after the first open; replicas opening together write the same values). A document its schema
 * cannot serialize (never one an import admitted) is left without, as on SQLite.
 */
async function fillApiJson(pool: pg.Pool): Promise<void> {
  for (let after = '0'; ;) {
    const { rows } = await pool.query<{ seq: string; kind: string; doc: string }>(
      'SELECT seq, kind, doc FROM artifacts WHERE api_json IS NULL AND seq > $1 ORDER BY seq LIMIT 1000',
      [after],
    );
    const last = rows.at(-1);
    if (last === undefined) return;
    after = last.seq;
    const ready = rows.map((r) => ({ seq: r.seq, json: readyJson(r.kind, r.doc) })).filter((r) => r.json !== null);
    await pool.query(
      'UPDATE artifacts a SET api_json = v.j FROM unnest($1::bigint[], $2::text[]) AS v(seq, j) WHERE a.seq = v.seq',
      [ready.map((r) => r.seq), ready.map((r) => r.json)],
    );
  }
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
  return new PostgresTraceStore(pool, rows, options);
}
