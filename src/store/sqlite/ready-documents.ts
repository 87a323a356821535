/**
 * Keeps `artifacts.api_json` (the ready-to-send documents, shared/api-document.ts) filled and
 * current on SQLite: when the document schemas changed since the stored forms were written
 * (`ready_documents.fingerprint`), every form is dropped; then every row without one is given one,
 * a thousand rows per transaction, each written only if the row still has none. A document the
 * schema cannot serialize (never one an import admitted) stays without: reads serialize it
 * themselves, and fail for it as they always did.
 */
import type { DatabaseSync } from 'node:sqlite';
import { READY_FINGERPRINT, readyJson } from '../../shared/api-document.ts';

const BATCH = 1000;

/** At open (after the migrations): forms of older schemas dropped, then every missing one written. */
export function refreshReadyDocuments(db: DatabaseSync): void {
  const stored = db.prepare('SELECT fingerprint FROM ready_documents WHERE id = 1').get()?.fingerprint;
  if (stored !== READY_FINGERPRINT) {
    inTransaction(db, () => {
      db.exec('UPDATE artifacts SET api_json = NULL WHERE api_json IS NOT NULL');
      db.prepare(
        'INSERT INTO ready_documents (id, fingerprint) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint',
      ).run(READY_FINGERPRINT);
    });
  }
  for (let after = 0; after >= 0;) after = inTransaction(db, () => fillReadyDocuments(db, after));
}

/**
 * Writes the forms of up to a thousand rows without one, from `seq` `after` on, in the caller's
 * transaction; answers the last `seq` seen, or -1 when none was left.
 */
export function fillReadyDocuments(db: DatabaseSync, after = 0): number {
  const rows = db
    .prepare('SELECT seq, kind, doc FROM artifacts WHERE api_json IS NULL AND seq > ? ORDER BY seq LIMIT ?')
    .all(after, BATCH) as { seq: number; kind: string; doc: string }[];
  const update = db.prepare('UPDATE artifacts SET api_json = ? WHERE seq = ? AND api_json IS NULL');
  for (const r of rows) {
    const json = readyJson(r.kind, r.doc);
    if (json !== null) update.run(json, r.seq);
  }
  return rows.length < BATCH ? -1 : (rows.at(-1)?.seq ?? -1);
}

function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
