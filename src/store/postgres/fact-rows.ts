/**
 * The statements of detection's facts (stats/subject-facts.ts, stats/evaluation-facts.ts) over
 * every subject's rows of one type (subject-rows.ts), in a statistics snapshot as `aggregate`'s.
 */
import type pg from 'pg';
import { sqlNumber } from '../sql-values.ts';
import type { SubjectSource } from '../stats/subject-facts.ts';
import { sealedMarks } from './skill-rows.ts';
import { inStatsSnapshot } from './stats-snapshot.ts';
import { agentSubjectRows, skillSubjectRows } from './subject-rows.ts';

export function factRows(
  client: pg.ClientBase,
  type: 'skill' | 'agent',
  compile: (source: SubjectSource) => { sql: string; params: unknown[] },
  /** A planner setting for the statement alone (SET LOCAL), if any. */
  setting?: string,
): Promise<Record<string, unknown>[]> {
  return inStatsSnapshot(client, async () => {
    if (setting !== undefined) await client.query(`SET LOCAL ${setting}`);
    const source = type === 'agent' ? agentSubjectRows() : skillSubjectRows(await sealedMarks(client, false));
    const { sql, params } = compile(source);
    return (await client.query(sql, params)).rows as Record<string, unknown>[];
  });
}

/** SubjectFactsReader `firstSpanS`: by the index on (org_id, start_s). */
export async function firstSpanS(client: pg.ClientBase, orgId: string, sinceS: number): Promise<number | null> {
  const sql = 'SELECT min(start_s) AS s FROM spans WHERE org_id = $1 AND start_s >= $2';
  const [row] = (await client.query<{ s: unknown }>(sql, [orgId, sinceS])).rows;
  return row?.s === null || row?.s === undefined ? null : sqlNumber(row.s);
}
