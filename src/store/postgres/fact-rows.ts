/**
 * The statements of detection's facts (stats/subject-facts.ts, stats/evaluation-facts.ts) over
 * every subject's rows of one type (subject-rows.ts), in a statistics snapshot as `aggregate`'s.
 */
import type pg from 'pg';
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
