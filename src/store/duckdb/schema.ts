/**
 * The DuckDB trace schema, as the ordered SQL files of `migrations/` applied once each at open
 * (frozen once released: a change is a new file; see ../migrations.ts). Version 2 numbers spans in
 * ingestion order (`seq`), keys traces by their 128-bit id (`trace_key`), stores low-cardinality
 * dimensions as codes of `dim_values` (dictionary.ts) and adds `skill_spans`, the spans of each
 * skill's traces, materialized by sealing (sealing.ts) and sorted by skill key and time, so that a
 * statistics query reads one skill's rows only. The current column order is declared in columns.ts.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pendingMigrations } from '../migrations.ts';
import { sqlText } from '../sql-values.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Applies the migrations not yet recorded in `schema_migrations`, each in its own transaction. */
export async function migrate(
  conn: DuckDBConnection,
  notice: (message: string) => void = () => undefined,
): Promise<void> {
  await conn.run('CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)');
  const done = new Set(
    (await conn.runAndReadAll('SELECT name FROM schema_migrations')).getRowObjectsJS().map((r) => sqlText(r.name)),
  );
  // Recorded without the .sql extension, as since the first release.
  for (const { name, sql } of pendingMigrations(DIR, done, (file) => file.replace(/\.sql$/, ''))) {
    // A fresh file migrates in milliseconds; an existing one rewrites its spans (~5 s per million).
    if (done.size > 0) notice(`migrating the trace store to ${name} (once; existing spans are rewritten)`);
    await conn.run('BEGIN TRANSACTION');
    try {
      await conn.run(sql);
      await conn.run('INSERT INTO schema_migrations VALUES ($1, now())', [name]);
      await conn.run('COMMIT');
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }
}
