/**
 * A fresh, uniquely named PostgreSQL schema per contract run, in the database of
 * DATABASE_URL_TEST (default: the local service). When no server answers, the suites are skipped
 * with a visible notice, except under REQUIRE_SERVER_TESTS=1 (CI), where that is a failure.
 */
import pg from 'pg';

export const PG_URL = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    if (process.env.REQUIRE_SERVER_TESTS === '1')
      throw new Error(`PostgreSQL at ${PG_URL} is unreachable and CI requires the server-mode tests`);
    console.warn(
      `NOTICE: PostgreSQL at ${PG_URL} is unreachable; PostgreSQL contract tests are skipped (.ci/run always provides one)`,
    );
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function freshSchemaName(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

/** Runs `work` on a connection of its own to the test database, closed afterwards. */
export async function withPgClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await withPgClient((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
}
