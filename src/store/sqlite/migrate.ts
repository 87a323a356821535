/** The registry's SQLite migrations (`migrations/*.sql`, see ../migrations.ts), recorded in `schema_migrations`. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DatabaseSync } from 'node:sqlite';
import { readyJson } from '../../shared/api-document.ts';
import { pendingMigrations } from '../migrations.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Applies pending migrations, each in its own transaction; returns the file names applied now. */
export function migrate(db: DatabaseSync): string[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  const done = new Set(
    (db.prepare('SELECT name FROM schema_migrations').all() as { name: string }[]).map((r) => r.name),
  );
  const applied: string[] = [];
  for (const { name: file, sql } of pendingMigrations(DIR, done)) {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(file, new Date().toISOString());
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
    applied.push(file);
  }
  fillApiJson(db);
  return applied;
}

/**
 * Writes `api_json` of rows imported before migration 004 (none after the first open), in one
 * transaction. A document its schema cannot serialize (never one an import admitted) is left
 * without: reads serialize it themselves, and fail for it as they always did.
 */
function fillApiJson(db: DatabaseSync): void {
  const rows = db.prepare('SELECT seq, kind, doc FROM artifacts WHERE api_json IS NULL').all() as {
    seq: number;
    kind: string;
    doc: string;
  }[];
  if (rows.length === 0) return;
  const update = db.prepare('UPDATE artifacts SET api_json = ? WHERE seq = ?');
  db.exec('BEGIN IMMEDIATE');
  try {
    for (const r of rows) {
      const json = readyJson(r.kind, r.doc);
      if (json !== null) update.run(json, r.seq);
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
