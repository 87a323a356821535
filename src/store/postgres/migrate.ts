/**
 * Ordered SQL files of one store applied once each, in one transaction holding an advisory lock
 * per store, so replicas starting together neither race nor apply a file twice.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { pendingMigrations } from '../migrations.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const LOCKS = { registry: 73_100_001, traces: 73_100_002 } as const;

export async function migrate(pool: pg.Pool, store: keyof typeof LOCKS, schema = 'public'): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    // No statement timeout: a migration may copy a table (trace migration 005), however long it takes.
    await client.query('BEGIN; SET LOCAL statement_timeout = 0');
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOCKS[store]]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${store}_schema_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await client.query<{ name: string }>(`SELECT name FROM ${store}_schema_migrations`)).rows.map((r) => r.name),
    );
    for (const { name: file, sql } of pendingMigrations(path.join(ROOT, store), done)) {
      await client.query(sql);
      await client.query(`INSERT INTO ${store}_schema_migrations (name) VALUES ($1)`, [file]);
      applied.push(file);
    }
    await client.query('COMMIT');
    return applied;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
