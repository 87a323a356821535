/** The registry's SQLite migrations (`migrations/*.sql`, see ../migrations.ts), recorded in `schema_migrations`. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DatabaseSync } from 'node:sqlite';
import { pendingMigrations } from '../migrations.ts';
import { refreshReadyDocuments } from './ready-documents.ts';
import type { ReadyProgress } from '../../shared/api-document.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Applies pending migrations, each in its own transaction, then brings the ready-to-send documents
 * up to date (ready-documents.ts); returns the file names applied now.
 */
export function migrate(db: DatabaseSync, progress?: ReadyProgress): string[] {
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
  refreshReadyDocuments(db, progress);
  return applied;
}
