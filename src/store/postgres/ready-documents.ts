/**
 * Keeps `artifacts.api_json` (the ready-to-send documents, shared/api-document.ts) filled and
 * current on PostgreSQL, as ../sqlite/ready-documents.ts does on SQLite: forms of older schemas
 * dropped (the registry generation moves, so response caches drop answers built from them), then
 * every row without a form given one, a thousand rows per statement, each written only if the row
 * still has none and the same document. Replicas opening together take turns on an advisory lock,
 * so one does the work and the others find nothing left; the partial index on rows without a form
 * makes that check free once done. The ready relationship forms (relationship-forms.ts) follow:
 * dropped with the fingerprint, then filled.
 */
import type pg from 'pg';
import { IMPORT_LOCK } from './import-lock.ts';
import { fillRelationshipForms } from './relationship-forms.ts';
import { READY_FINGERPRINT, readyJson, readyProgress, type ReadyProgress } from '../../shared/api-document.ts';

const READY_LOCK = IMPORT_LOCK;
const BATCH = 1000;

/** At open (after the migrations), on a connection of its own without a statement timeout. */
export async function refreshReadyDocuments(pool: pg.Pool, progress?: ReadyProgress): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [READY_LOCK]);
    const { rows } = await client.query<{ fingerprint: string }>(
      'SELECT fingerprint FROM ready_documents WHERE id = 1',
    );
    if (rows[0]?.fingerprint !== READY_FINGERPRINT) {
      await client.query('BEGIN');
      const dropped = await client.query('UPDATE artifacts SET api_json = NULL WHERE api_json IS NOT NULL');
      await client.query('UPDATE artifacts SET relationships_json = NULL WHERE relationships_json IS NOT NULL');
      await client.query(
        `INSERT INTO ready_documents (id, fingerprint) VALUES (1, $1)
         ON CONFLICT (id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint`,
        [READY_FINGERPRINT],
      );
      if ((dropped.rowCount ?? 0) > 0) await client.query('UPDATE registry_generation SET n = n + 1 WHERE id = 1');
      await client.query('COMMIT');
    }
    await fillInSteps((after) => fillReadyDocuments(client, after), readyProgress(progress));
    // Relationship forms, under the imports' lock (READY_LOCK is IMPORT_LOCK): no import, nor any
    // writer's trigger, changes what a step reads before it writes (relationship-forms.ts).
    await fillInSteps((after) => fillRelationshipForms(client, after), readyProgress(progress, 'ready relationships'));
    await client.query('SELECT pg_advisory_unlock($1)', [READY_LOCK]);
  } finally {
    // Never back in the pool with its session settings (no timeout) or, after a failure, the lock.
    client.release(true);
  }
}

/** Runs `step` from the first row until none is left, reporting the running total. */
async function fillInSteps(
  step: (after: string) => Promise<{ last: string; written: number }>,
  report: (written: number, done: boolean) => void,
): Promise<void> {
  let written = 0;
  for (let after = '0'; after !== '';) {
    const batch = await step(after);
    after = batch.last;
    written += batch.written;
    report(written, after === '');
  }
}

/**
 * Writes the forms of up to a thousand rows without one, from `seq` `after` on, in the client's
 * transaction if any; answers how many it wrote and the last `seq` seen ('' when none is left).
 */
export async function fillReadyDocuments(
  client: pg.ClientBase,
  after = '0',
): Promise<{ last: string; written: number }> {
  const { rows } = await client.query<{ seq: string; kind: string; doc: string }>(
    'SELECT seq, kind, doc FROM artifacts WHERE api_json IS NULL AND seq > $1 ORDER BY seq LIMIT $2',
    [after, BATCH],
  );
  const ready = rows.flatMap((r) => {
    const json = readyJson(r.kind, r.doc);
    return json === null ? [] : [{ ...r, json }];
  });
  const last = rows.length < BATCH ? '' : (rows.at(-1)?.seq ?? '');
  if (ready.length === 0) return { last, written: 0 };
  const { rowCount } = await client.query(
    `UPDATE artifacts a SET api_json = v.j FROM unnest($1::bigint[], $2::text[], $3::text[]) AS v(seq, j, doc)
     WHERE a.seq = v.seq AND a.api_json IS NULL AND a.doc = v.doc`,
    [ready.map((r) => r.seq), ready.map((r) => r.json), ready.map((r) => r.doc)],
  );
  return { last, written: rowCount ?? 0 };
}
