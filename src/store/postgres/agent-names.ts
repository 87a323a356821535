/**
 * Admitting agent names as sent in PostgreSQL (store/agent-names.ts), in the caller's transaction:
 * per workspace and day (in the order groupsOf gives, so two admissions never wait on each other
 * in a cycle) an advisory lock, the names held and which of the asked ones, then the new ones
 * admitted recorded. The lock makes replicas admitting at once take turns, so the cap holds.
 */
import type pg from 'pg';
import { decide, groupsOf, type AgentNameUse } from '../agent-names.ts';
import { sqlNumber } from '../sql-values.ts';

/** The first key of the two-key advisory lock of a workspace and day (the second: a hash of organization, workspace, day). */
const NAMES_LOCK = 7312;
const WHERE = 'org_id = $1 AND workspace_id = $2 AND day = $3';

export async function admitInTransaction(
  client: pg.ClientBase,
  orgId: string,
  cap: number,
  uses: readonly AgentNameUse[],
): Promise<AgentNameUse[]> {
  const admitted: AgentNameUse[] = [];
  for (const g of groupsOf(uses)) {
    const at = [orgId, g.workspaceId, g.day];
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [NAMES_LOCK, JSON.stringify(at)]);
    const held = await client.query<{ n: string }>(`SELECT count(*) AS n FROM agent_names WHERE ${WHERE}`, at);
    const known = await client.query<{ name: string }>(
      `SELECT name FROM agent_names WHERE ${WHERE} AND name = ANY($4::text[])`,
      [...at, g.names],
    );
    const verdict = decide(
      g,
      { count: sqlNumber(held.rows[0]?.n), known: new Set(known.rows.map((r) => r.name)) },
      cap,
    );
    if (verdict.added.length > 0)
      await client.query('INSERT INTO agent_names SELECT $1, $2, $3, unnest($4::text[]) ON CONFLICT DO NOTHING', [
        ...at,
        verdict.added,
      ]);
    // One push per name: spread as arguments, some 125,000 names overflow the stack.
    for (const name of verdict.admitted) admitted.push({ workspaceId: g.workspaceId, day: g.day, name });
  }
  return admitted;
}
