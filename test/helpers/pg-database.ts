/**
 * A PostgreSQL database of its own for a test file's apps in server mode: created before the file's
 * tests and dropped after them, in the server of DATABASE_URL_TEST. Null when no server answers
 * (contract/pg-schema.ts: a failure under REQUIRE_SERVER_TESTS=1).
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { PG_URL, postgresReachable } from '../contract/pg-schema.ts';

/** The environment that points an app at the file's database (DATABASE_URL), or null. */
export async function fileDatabase(prefix: string): Promise<Record<string, string> | null> {
  if (!(await postgresReachable())) return null;
  const database = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  beforeAll(async () => admin(`CREATE DATABASE ${database}`));
  afterAll(async () => admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  return { DATABASE_URL: url.toString() };
}
