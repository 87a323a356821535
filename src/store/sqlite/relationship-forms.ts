/**
 * Writes the ready relationship forms (shared/relationship-forms.ts) of latest artifacts that have
 * none on SQLite: after an import, in its transaction (the triggers of migration 005 dropped the
 * forms it changed), and when the store opens. Five hundred artifacts per step, in the caller's
 * transaction.
 */
import type { DatabaseSync } from 'node:sqlite';
import { relationshipForms } from '../../shared/relationship-forms.ts';
import { toIdentity, toRelationship } from '../sql-rows.ts';
import { LATEST_WORKSPACES, RELATIONSHIPS_OF_IDS } from './registry-sql.ts';

const BATCH = 500;
const IN = 'IN (SELECT value FROM json_each(?))';

/** Writes the forms of up to BATCH latest rows without one from `seq` `after` on; answers how many it wrote and the last `seq` seen (-1 when none is left). */
export function fillRelationshipForms(db: DatabaseSync, after = 0): { last: number; written: number } {
  const rows = db
    .prepare(
      'SELECT seq, id, kind FROM artifacts WHERE is_latest = 1 AND relationships_json IS NULL AND seq > ? ORDER BY seq LIMIT ?',
    )
    .all(after, BATCH) as { seq: number; id: string; kind: string }[];
  let written = 0;
  if (rows.length > 0) {
    const ids = rows.map((r) => r.id);
    const list = JSON.stringify(ids);
    const rels = db.prepare(RELATIONSHIPS_OF_IDS).all(list, list).map(toRelationship);
    const ends = JSON.stringify([...new Set(rels.flatMap((r) => [r.from.id, r.to.id]))]);
    const workspaceOf = new Map(
      db
        .prepare(LATEST_WORKSPACES)
        .all(ends)
        .map((r) => [r.id as string, r.workspace_id as string]),
    );
    const agents = JSON.stringify(rows.filter((r) => r.kind === 'agent').map((r) => r.id));
    const identities = db.prepare(`SELECT * FROM identities WHERE agent_id ${IN}`).all(agents).map(toIdentity);
    const write = db.prepare(
      'UPDATE artifacts SET relationships_json = ?, relationship_ends = ?, identity_json = ? WHERE seq = ? AND relationships_json IS NULL',
    );
    const forms = relationshipForms(ids, rels, workspaceOf, identities);
    for (const r of rows) {
      const form = forms.get(r.id);
      if (form !== undefined)
        written += Number(
          write.run(form.relationships, JSON.stringify(form.endWorkspaces), form.identity ?? null, r.seq).changes,
        );
    }
  }
  return { last: rows.length < BATCH ? -1 : (rows.at(-1)?.seq ?? -1), written };
}

/** Every missing form, step by step, in the caller's transaction. */
export function fillAllRelationshipForms(db: DatabaseSync): void {
  for (let after = 0; after >= 0;) after = fillRelationshipForms(db, after).last;
}
