/**
 * Writes the ready relationship forms (shared/relationship-forms.ts) of latest artifacts that have
 * none on PostgreSQL, as ../sqlite/relationship-forms.ts does on SQLite: after an import, in its
 * transaction (the triggers of migration 004 dropped the forms it changed), and when the store
 * opens, holding the imports' lock, so no import, and no trigger of another writer, changes what
 * a step reads before it writes. Five hundred artifacts per step, four statements each.
 */
import type pg from 'pg';
import { relationshipForms } from '../../shared/relationship-forms.ts';
import { toIdentity, toRelationship, type Row } from '../sql-rows.ts';
import { endWorkspacesOf, relationshipsWithEndsSql } from './registry-sql.ts';

const BATCH = 500;

/** Writes the forms of up to BATCH latest rows without one from `seq` `after` on, in the client's transaction; answers how many it wrote and the last `seq` seen ('' when none is left). */
export async function fillRelationshipForms(
  client: pg.ClientBase,
  after = '0',
): Promise<{ last: string; written: number }> {
  const { rows } = await client.query<{ seq: string; id: string; kind: string }>(
    'SELECT seq, id, kind FROM artifacts WHERE is_latest AND relationships_json IS NULL AND seq > $1 ORDER BY seq LIMIT $2',
    [after, BATCH],
  );
  let written = 0;
  if (rows.length > 0) {
    const ids = rows.map((r) => r.id);
    const rels = await client.query<Row>(relationshipsWithEndsSql(false), [ids]);
    const workspaceOf = endWorkspacesOf(rels.rows);
    const identities = await client.query<Row>('SELECT * FROM identities WHERE agent_id = ANY($1::text[])', [
      rows.filter((r) => r.kind === 'agent').map((r) => r.id),
    ]);
    const forms = relationshipForms(ids, rels.rows.map(toRelationship), workspaceOf, identities.rows.map(toIdentity));
    const ready = rows.flatMap((r) => {
      const form = forms.get(r.id);
      return form === undefined
        ? []
        : [
            {
              seq: r.seq,
              json: form.relationships,
              ends: JSON.stringify(form.endWorkspaces),
              identity: form.identity ?? null,
            },
          ];
    });
    const { rowCount } = await client.query(
      `UPDATE artifacts a SET relationships_json = v.j, relationship_ends = v.e, identity_json = v.i
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS v(seq, j, e, i)
       WHERE a.seq = v.seq AND a.relationships_json IS NULL`,
      [ready.map((r) => r.seq), ready.map((r) => r.json), ready.map((r) => r.ends), ready.map((r) => r.identity)],
    );
    written = rowCount ?? 0;
  }
  return { last: rows.length < BATCH ? '' : (rows.at(-1)?.seq ?? ''), written };
}

/** Every missing form, step by step, in the client's transaction. */
export async function fillAllRelationshipForms(client: pg.ClientBase): Promise<void> {
  for (let after = '0'; after !== '';) after = (await fillRelationshipForms(client, after)).last;
}
