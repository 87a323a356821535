/**
 * Admitting agent names as sent in DuckDB (store/agent-names.ts): one transaction on the writer's
 * connection, which the writer runs between its appends, so admissions never interleave and the
 * cap of a workspace and day holds exactly. Per workspace and day: the names held and which of the
 * asked ones, then the new ones admitted recorded.
 */
import { INTEGER, LIST, VARCHAR, listValue, type DuckDBConnection } from '@duckdb/node-api';
import { decide, groupsOf, type AgentNameUse } from '../agent-names.ts';
import { sqlNumber, sqlText } from '../sql-values.ts';

const WHERE = 'org_id = $1 AND workspace_id = $2 AND day = $3';
/** The types of (organization, workspace, day, names). */
const TYPES = [VARCHAR, VARCHAR, INTEGER, LIST(VARCHAR)];

/** The uses of `uses` admitted; the caller holds the writer. */
export async function admitOnWriter(
  conn: DuckDBConnection,
  orgId: string,
  cap: number,
  uses: readonly AgentNameUse[],
): Promise<AgentNameUse[]> {
  const admitted: AgentNameUse[] = [];
  await conn.run('BEGIN TRANSACTION');
  try {
    for (const g of groupsOf(uses)) {
      const at = [orgId, g.workspaceId, g.day];
      const count = `SELECT count(*) AS n FROM agent_names WHERE ${WHERE}`;
      const [held] = (await conn.runAndReadAll(count, at, TYPES.slice(0, 3))).getRowObjectsJS();
      const asked = `SELECT name FROM agent_names WHERE ${WHERE} AND name IN (SELECT unnest($4))`;
      const known = (await conn.runAndReadAll(asked, [...at, listValue(g.names)], TYPES))
        .getRowObjectsJS()
        .map((r) => sqlText(r.name));
      const verdict = decide(g, { count: sqlNumber(held?.n), known: new Set(known) }, cap);
      if (verdict.added.length > 0)
        await conn.run(
          'INSERT INTO agent_names SELECT $1, $2, $3, unnest($4)',
          [...at, listValue(verdict.added)],
          TYPES,
        );
      // One push per name: spread as arguments, some 125,000 names overflow the stack.
      for (const name of verdict.admitted) admitted.push({ workspaceId: g.workspaceId, day: g.day, name });
    }
    await conn.run('COMMIT');
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return admitted;
}
