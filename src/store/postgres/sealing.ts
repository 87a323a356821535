/**
 * Sealing on PostgreSQL: moving the watermark `sealed.w` from W to W' and keeping `skill_spans`
 * equal to
 *
 *   { (span s, skill S, versions) : s.xid < W, the trace of s has a mapping to S with xid < W,
 *     versions = the non-null versions of those mappings }
 *
 * as DuckDB's sealing does (duckdb/sealing.ts), with transaction ids in place of DuckDB's
 * sequence numbers: several replicas write at once, so rows do not commit in the order of any
 * counter, but every transaction below a snapshot's xmin has ended. A step runs in one REPEATABLE
 * READ transaction and takes W' = the xmin of its own snapshot: every row below W' it will ever
 * see is in that snapshot, and no row below W' can appear later. One replica seals at a time (a
 * session advisory lock taken before the snapshot, so a step always starts from the last one's
 * committed work); retention takes the same lock.
 *
 * A trace may name its skill after its spans were sealed (exporters send a parent after its
 * children), so a step also rewrites the sealed spans of every (trace, skill) pair that gained a
 * mapping. Statistics read `sealed.w` in the snapshot of their own statement (skill-rows.ts), so
 * they see a step entirely or not at all and never count a span twice.
 */
import type pg from 'pg';
import { SPAN_DIMENSION_COLUMNS, SPAN_LATER_COLUMNS, SPAN_MEASURE_COLUMNS } from '../stats/span-columns.ts';
import {
  EMPTY_ROLLUPS_SQL,
  KEEPS_ROLLUPS,
  marksSql,
  rollupDeltaSql,
  rollupReturning,
  specialPairsSql,
} from './rollups.ts';

/**
 * The advisory lock of sealing and retention (one replica at a time), as SQL: advisory locks are
 * the database's, so the key names the schema too (gateways on other schemas do not wait).
 */
export const SEALING_LOCK = "hashtext('gateway.trace_sealing:' || current_schema())";

/** skill_spans' columns, each with its value for a span `s` of the skill and versions of `v`. */
const SEALED: [string, string][] = [
  ['org_id', 'v.org_id'],
  ['of_skill', 'v.skill'],
  ['of_versions', 'v.versions'],
  ['trace_key', 's.trace_id::uuid'],
  ['workspace_id', 's.workspace_id'],
  ...SPAN_DIMENSION_COLUMNS.map((c): [string, string] => [c, `s.${c}`]),
  ['is_invocation', "s.category = 'skill_invocation'"],
  ['is_tool_call', "s.category = 'tool_call'"],
  ...SPAN_MEASURE_COLUMNS.map((c): [string, string] => [c, `s.${c}`]),
  ...SPAN_LATER_COLUMNS.map((c): [string, string] => [c, `s.${c}`]),
];
const sealedColumns = SEALED.map(([column]) => column).join(', ');
const sealedRow = SEALED.map(([column, value]) => `${value} AS ${column}`).join(', ');

/** Memory per sort or hash of a sealing step (one replica seals at a time). */
const SEAL_WORK_MEM = '64MB';

/** What one step did: `locked` when another replica held the lock; `more` when it stopped at its bound. */
export interface StepResult {
  locked: boolean;
  more: boolean;
}

/**
 * Seals what has ended since the last step, at most about `maxSpans` spans (any watermark up to the
 * snapshot's xmin is sound, so a step may stop early: it stops at the transaction id where the
 * bound falls, and always seals at least one transaction's rows), if this replica gets the lock.
 * `client` is a connection of its own, outside any transaction.
 */
export async function sealStep(client: pg.ClientBase, maxSpans: number): Promise<StepResult> {
  const lock = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${SEALING_LOCK}) AS ok`);
  if (lock.rows[0]?.ok !== true) return { locked: true, more: false };
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    try {
      // The marks' window sorts and the rollup sums of a step of STEP spans fit in memory.
      await client.query(`SET LOCAL statement_timeout = 0; SET LOCAL work_mem = '${SEAL_WORK_MEM}'; ${KEEPS_ROLLUPS}`);
      // W' is the snapshot's xmin, or lower where the bound falls: the first xid past maxSpans
      // spans, or, when one transaction holds them all, the next xid after it.
      const marks = await client.query<{ w0: string; w1: string; capped: boolean }>(
        `SELECT w0::text AS w0, LEAST(bound, xmin)::text AS w1, COALESCE(bound < xmin, false) AS capped FROM (
          SELECT s.w AS w0, pg_snapshot_xmin(pg_current_snapshot()) AS xmin,
            (SELECT CASE WHEN x.xid > s.w THEN x.xid ELSE (SELECT min(n.xid) FROM spans n WHERE n.xid > s.w) END
             FROM (SELECT xid FROM spans WHERE xid >= s.w ORDER BY xid OFFSET $1 LIMIT 1) x) AS bound
          FROM sealed s) marks`,
        [maxSpans],
      );
      const { w0, w1, capped } = marks.rows[0] as { w0: string; w1: string; capped: boolean };
      if (w0 !== w1) await sealRange(client, w0, w1);
      await client.query('COMMIT');
      return { locked: false, more: capped && w1 !== w0 };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    // A failed unlock throws: the caller destroys the connection, which releases the lock.
    await client.query(`SELECT pg_advisory_unlock(${SEALING_LOCK})`);
  }
}

/** Seals the spans and mappings with w0 <= xid < w1; the caller's transaction holds the lock. */
async function sealRange(client: pg.ClientBase, w0: string, w1: string): Promise<void> {
  const range = [w0, w1];
  // (org, trace, skill) pairs that gained a mapping: their sealed spans are rewritten whole.
  await client.query(
    `CREATE TEMP TABLE seal_changed ON COMMIT DROP AS
    SELECT DISTINCT org_id, trace_id, skill FROM trace_skills WHERE xid >= $1::xid8 AND xid < $2::xid8`,
    range,
  );
  // The skills (with versions) of every trace with a newly sealed span or a changed pair.
  await client.query(
    `CREATE TEMP TABLE seal_versions ON COMMIT DROP AS
    SELECT m.org_id, m.trace_id, m.skill,
      COALESCE(array_agg(DISTINCT m.skill_version) FILTER (WHERE m.skill_version IS NOT NULL), '{}') AS versions
    FROM trace_skills m JOIN (
      SELECT org_id, trace_id FROM spans WHERE xid >= $1::xid8 AND xid < $2::xid8
      UNION SELECT org_id, trace_id FROM seal_changed) t ON t.org_id = m.org_id AND t.trace_id = m.trace_id
    WHERE m.xid < $2::xid8
    GROUP BY m.org_id, m.trace_id, m.skill`,
    range,
  );
  // Pairs gaining spans that already have sealed ones are rewritten whole too, their marks
  // (rollups.ts) being over all of a pair's spans; not special pairs, whose marks are not used (a
  // pair of more than MARKED_PAIR_SPANS spans is special, so no rewrite exceeds that).
  await client.query(
    `INSERT INTO seal_changed SELECT v.org_id, v.trace_id, v.skill FROM seal_versions v
    WHERE EXISTS (SELECT 1 FROM skill_spans k WHERE k.org_id = v.org_id AND k.of_skill = v.skill AND k.trace_key = v.trace_id::uuid)
    AND NOT EXISTS (SELECT 1 FROM skill_special p WHERE p.org_id = v.org_id AND p.of_skill = v.skill AND p.trace_key = v.trace_id::uuid)
    EXCEPT SELECT org_id, trace_id, skill FROM seal_changed`,
  );
  await client.query('ANALYZE seal_changed, seal_versions');
  await client.query(`WITH gone AS (DELETE FROM skill_spans s USING seal_changed c
    WHERE s.org_id = c.org_id AND s.of_skill = c.skill AND s.trace_key = c.trace_id::uuid
    ${rollupReturning('s')})
  ${rollupDeltaSql('gone', -1)}`);
  // Inserted sorted by skill, then invocations apart (percentiles read those alone), then time: a
  // skill's rows of one step share pages. Each pair's rows here are all its sealed spans.
  await client.query(
    `WITH written AS (INSERT INTO skill_spans (${sealedColumns}, firsts)
    SELECT ${sealedColumns}, ${marksSql()} AS firsts FROM (
      SELECT ${sealedRow} FROM spans s JOIN seal_versions v ON v.org_id = s.org_id AND v.trace_id = s.trace_id
      WHERE s.xid >= $1::xid8 AND s.xid < $2::xid8
      UNION ALL
      SELECT ${sealedRow} FROM seal_changed c
      JOIN seal_versions v ON v.org_id = c.org_id AND v.trace_id = c.trace_id AND v.skill = c.skill
      JOIN spans s ON s.org_id = c.org_id AND s.trace_id = c.trace_id
      WHERE s.xid < $1::xid8
    ) r ORDER BY org_id, of_skill, is_invocation, start_s
    ${rollupReturning()}),
  special AS (${specialPairsSql('written')})
  ${rollupDeltaSql('written', 1)}`,
    range,
  );
  await client.query(EMPTY_ROLLUPS_SQL);
  await client.query('UPDATE sealed SET w = $1::xid8', [w1]);
}
