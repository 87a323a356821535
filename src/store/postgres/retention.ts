/**
 * Retention's work in the transaction that prunes (PostgresTraceStore.pruneBefore): the sealed
 * rows and the rollups they counted, the trace mappings, evaluations, agent names of the days
 * before the cutoff's, and the spans and metric points (partitions.ts: the months that end by the
 * cutoff dropped whole, last).
 */
import type pg from 'pg';
import { EMPTY_ROLLUPS_SQL, KEEPS_ROLLUPS, cutPairsSql, rollupDeltaSql, rollupReturning } from './rollups.ts';
import { pruneMonths } from './partitions.ts';
import { SEALING_LOCK } from './sealing.ts';

/**
 * Retention's locks, in the transaction that prunes: one replica at a time (another that finds
 * the lock taken answers false and leaves the work to the holder), never during a sealing step
 * (it waits for the sealing lock).
 */
const RETENTION_LOCKS = `SELECT CASE WHEN pg_try_advisory_xact_lock(hashtext('gateway.trace_retention:' || current_schema()))
  THEN (SELECT true FROM pg_advisory_xact_lock(${SEALING_LOCK})) ELSE false END AS ok`;

/** Prunes what starts before `cutoffS`; answers the spans deleted (0 when another replica holds the work). */
export async function pruneInTransaction(client: pg.PoolClient, cutoffS: number): Promise<number> {
  // Each DELETE must see what sealing committed while this waited for its lock: READ COMMITTED
  // whatever the server's default isolation (a snapshot from before the wait would keep sealed
  // rows of the spans it deletes).
  await client.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
  await client.query(`SET LOCAL statement_timeout = 0; ${KEEPS_ROLLUPS}`);
  if ((await client.query<{ ok: boolean }>(RETENTION_LOCKS)).rows[0]?.ok !== true) return 0;
  // The rollups lose what the sealed rows counted; a pair that keeps some of its rows may have
  // lost its marked ones, so it becomes special (rollups.ts), and pairs left with no rows stop being special.
  await client.query(
    `WITH gone AS (DELETE FROM skill_spans WHERE start_s < $1 ${rollupReturning()}),
  special AS (${cutPairsSql('gone')})
  ${rollupDeltaSql('gone', -1)}`,
    [cutoffS],
  );
  await client.query(EMPTY_ROLLUPS_SQL);
  await client.query(`DELETE FROM skill_special p WHERE NOT EXISTS (SELECT 1 FROM skill_spans k
  WHERE k.org_id = p.org_id AND k.of_skill = p.of_skill AND k.trace_key = p.trace_key)`);
  // Every span before the cutoff goes below: a trace keeps its mappings while it has spans from the cutoff on.
  for (const mapping of ['trace_skills', 'trace_agents'])
    await client.query(
      `DELETE FROM ${mapping} t WHERE t.start_s < $1
      AND NOT EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = t.trace_id AND s.org_id = t.org_id AND s.start_s >= $1)`,
      [cutoffS],
    );
  await client.query('DELETE FROM evaluations WHERE time_s < $1', [cutoffS]);
  await client.query('DELETE FROM agent_names WHERE day < $1', [Math.floor(cutoffS / 86400)]);
  return pruneMonths(client, cutoffS);
}
