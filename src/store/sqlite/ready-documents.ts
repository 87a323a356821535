/**
 * Keeps `artifacts.api_json` (the ready-to-send documents, shared/api-document.ts) filled and
 * current on SQLite: when the document schemas changed since the stored forms were written
 * (`ready_documents.fingerprint`), every form is dropped; then every row without one is given one,
 * a thousand rows per transaction, each written only if the row still has none. The ready
 * relationship forms (relationship-forms.ts) follow: dropped with the fingerprint, then filled. A document the
 * schema cannot serialize (never one an import admitted) stays without: reads serialize it
 * themselves, and fail for it as they always did.
 */
import type { DatabaseSync } from 'node:sqlite';
import { fillRelationshipForms } from './relationship-forms.ts';
import { READY_FINGERPRINT, readyJson, readyProgress, type ReadyProgress } from '../../shared/api-document.ts';

const BATCH = 1000;

/** At open (after the migrations): forms of older schemas dropped, then every missing one written. */
export function refreshReadyDocuments(db: DatabaseSync, progress?: ReadyProgress): void {
  const stored = db.prepare('SELECT fingerprint FROM ready_documents WHERE id = 1').get()?.fingerprint;
  if (stored !== READY_FINGERPRINT) {
    inTransaction(db, () => {
      db.exec('UPDATE artifacts SET api_json = NULL WHERE api_json IS NOT NULL');
      db.exec('UPDATE artifacts SET relationships_json = NULL WHERE relationships_json IS NOT NULL');
      db.prepare(
        'INSERT INTO ready_documents (id, fingerprint) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint',
      ).run(READY_FINGERPRINT);
    });
  }
  fillInSteps(db, (after) => fillReadyDocuments(db, after), readyProgress(progress));
  fillInSteps(db, (after) => fillRelationshipForms(db, after), readyProgress(progress, 'ready relationships'));
}

/** Runs `step` from the first row until none is left, each step in its own transaction, reporting the running total. */
function fillInSteps(
  db: DatabaseSync,
  step: (after: number) => { last: number; written: number },
  report: (written: number, done: boolean) => void,
): void {
  let written = 0;
  for (let after = 0; after >= 0;) {
    const batch = inTransaction(db, () => step(after));
    after = batch.last;
    written += batch.written;
    report(written, after < 0);
  }
}

/**
 * Writes the forms of up to a thousand rows without one, from `seq` `after` on, in the caller's
 * transaction; answers how many it wrote and the last `seq` seen (-1 when none is left).
 */
export function fillReadyDocuments(db: DatabaseSync, after = 0): { last: number; written: number } {
  const rows = db
    .prepare('SELECT seq, kind, doc FROM artifacts WHERE api_json IS NULL AND seq > ? ORDER BY seq LIMIT ?')
    .all(after, BATCH) as { seq: number; kind: string; doc: string }[];
  const update = db.prepare('UPDATE artifacts SET api_json = ? WHERE seq = ? AND api_json IS NULL');
  let written = 0;
  for (const r of rows) {
    const json = readyJson(r.kind, r.doc);
    if (json !== null) written += Number(update.run(json, r.seq).changes);
  }
  return { last: rows.length < BATCH ? -1 : (rows.at(-1)?.seq ?? -1), written };
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
