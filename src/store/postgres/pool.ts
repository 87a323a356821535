/**
 * PostgreSQL connections for the server-mode engines: one pg.Pool per store, a bounded statement
 * timeout, the store's schema on every connection, and connection failures turned into the
 * store's "unavailable" error. pg.Pool reconnects by itself once the server is back; client
 * errors (idle or checked out) are absorbed so a database restart never crashes the process.
 */
import pg from 'pg';

export interface PoolOptions {
  url: string;
  /** Every object of the store lives in this schema (tests isolate themselves with it). */
  schema?: string;
  max?: number;
  statementTimeoutMs?: number;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

export function createPool(options: PoolOptions): pg.Pool {
  const schema = options.schema ?? 'public';
  if (!SCHEMA.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
    options: `-c search_path=${schema}`,
  });
  pool.on('error', () => undefined);
  // A client checked out of the pool (sealing, ingestion and imports hold one for a transaction)
  // emits 'error' when its connection drops; unheard, that would end the process. The query under
  // way rejects on its own, and its caller answers 503 or retries.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** True when an error says the database cannot be reached, not that the query is wrong. */
export function isConnectionFailure(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (e.code !== undefined && (CONNECTION_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(e.message ?? '');
}
