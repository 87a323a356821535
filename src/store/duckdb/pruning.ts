/**
 * Retention for the DuckDB trace store (TRACE_RETENTION_DAYS): one transaction on the writer that
 * deletes the spans, sealed rows, metric points and evaluations before the cutoff. A trace's mappings to its
 * skills and agents stay while any of its spans does (the spans kept still count for the skill or
 * agent, sealed or not); day records older than the cutoff go, and with them the crossing marks they
 * alone justified (marks are a superset: one too many only costs time, sealing.ts), the sides of
 * calls their spans took (call-sides.ts), and the agent names admitted on days before the cutoff's.
 */
import type { DuckDBConnection } from '@duckdb/node-api';

/** Deletes what starts before `cutoffS`; answers the spans deleted. The caller holds the writer. */
export async function pruneBefore(conn: DuckDBConnection, cutoffS: number): Promise<number> {
  const cutoff = [cutoffS];
  await conn.run('BEGIN TRANSACTION');
  try {
    const spans = (await conn.run('DELETE FROM spans WHERE start_s < $1', cutoff)).rowsChanged;
    await conn.run('DELETE FROM skill_spans WHERE start_s < $1', cutoff);
    for (const mapping of ['trace_skills', 'trace_agents'])
      await conn.run(
        `DELETE FROM ${mapping} t WHERE t.start_s < $1
        AND NOT EXISTS (SELECT 1 FROM spans s WHERE s.org_id = t.org_id AND s.trace_key = t.trace_key)`,
        cutoff,
      );
    await conn.run('DELETE FROM skill_trace_days WHERE max_day < $1', [Math.floor(cutoffS / 86400)]);
    await conn.run(`DELETE FROM skill_crossing c
      WHERE NOT EXISTS (SELECT 1 FROM skill_trace_days d WHERE d.of_key = c.of_key AND d.trace_key = c.trace_key)`);
    await conn.run('DELETE FROM metric_points WHERE time_s < $1', cutoff);
    await conn.run('DELETE FROM evaluations WHERE time_s < $1', cutoff);
    await conn.run('DELETE FROM tool_call_sides WHERE start_s < $1', cutoff);
    await conn.run('DELETE FROM agent_names WHERE day < $1', [Math.floor(cutoffS / 86400)]);
    await conn.run('COMMIT');
    return spans;
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
