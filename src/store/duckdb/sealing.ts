/**
 * Sealing: moving the watermark `sealed.seq` from W to W' and keeping `skill_spans` equal to
 *
 *   { (span s, skill S, versions) : s.seq <= W, the trace of s has a mapping to S with seq <= W,
 *     versions = the non-null versions of those mappings }
 *
 * with S stored as its integer key (skill_keys, assigned here, never changed) and rows inserted
 * sorted by key and time, so a skill's rows are contiguous within each sealed step. It also keeps
 * `skill_crossing`: the (skill, trace) pairs whose sealed rows lie on more than one UTC day.
 *
 * A span's trace may name its skill after the span was sealed (OTLP exporters send a parent after
 * its children), so sealing also re-materializes the already sealed spans of every (trace, skill)
 * pair that gained a mapping. Everything happens in one transaction; the statistics query reads
 * `sealed.seq` in the same snapshot as the rows (skill-rows.ts), so it never counts a span twice.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { SPAN_DIMENSION_COLUMNS, SPAN_LATER_COLUMNS, SPAN_MEASURE_COLUMNS } from '../stats/span-columns.ts';

const DIMS = SPAN_DIMENSION_COLUMNS;
const MEASURES = SPAN_MEASURE_COLUMNS;
const LATER = SPAN_LATER_COLUMNS;
/** The span columns of `spans`, from `alias`. */
const spanData = (alias: string) => [...DIMS, 'category', ...MEASURES, ...LATER].map((c) => `${alias}.${c}`).join(', ');
/** The same as `skill_spans` stores them: the category as two booleans. */
const sealedData = (alias: string) =>
  [
    ...DIMS.map((c) => `${alias}.${c}`),
    `${alias}.category = 'skill_invocation'`,
    `${alias}.category = 'tool_call'`,
    ...MEASURES.map((c) => `${alias}.${c}`),
    ...LATER.map((c) => `${alias}.${c}`),
  ].join(', ');

/** Seals the spans and mappings with `from < seq <= to`; the caller holds the writer. */
export async function seal(conn: DuckDBConnection, from: number, to: number): Promise<void> {
  const range = [from, to];
  await conn.run('BEGIN TRANSACTION');
  try {
    // (org, trace, skill) pairs that gained a mapping: their sealed spans are rewritten whole.
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE seal_changed AS
      SELECT DISTINCT org_id, trace_key, skill FROM trace_skills WHERE seq > $1 AND seq <= $2`,
      range,
    );
    await conn.run(`DELETE FROM skill_spans USING seal_changed c JOIN skill_keys k ON k.org_id = c.org_id AND k.skill = c.skill
      WHERE skill_spans.of_key = k.key AND skill_spans.trace_key = c.trace_key`);
    // The skills (with versions) of every trace that has a newly sealed span or a changed pair.
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE seal_versions AS
      SELECT org_id, trace_key, skill, COALESCE(list(DISTINCT skill_version) FILTER (WHERE skill_version IS NOT NULL), []) AS versions
      FROM trace_skills
      WHERE seq <= $2 AND trace_key IN (SELECT trace_key FROM spans WHERE seq > $1 AND seq <= $2 UNION SELECT trace_key FROM seal_changed)
      GROUP BY org_id, trace_key, skill`,
      range,
    );
    await conn.run(`INSERT INTO skill_keys
      SELECT org_id, skill, (SELECT COALESCE(max(key), 0) FROM skill_keys) + row_number() OVER (ORDER BY org_id, skill)
      FROM (SELECT DISTINCT org_id, skill FROM seal_versions) n
      WHERE NOT EXISTS (SELECT 1 FROM skill_keys k WHERE k.org_id = n.org_id AND k.skill = n.skill)`);
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE seal_rows AS
      SELECT k.key AS of_key, r.versions AS of_versions, r.workspace_id, r.trace_key, ${sealedData('r')} FROM (
        SELECT v.org_id, v.skill AS of_skill, v.versions, s.workspace_id, s.trace_key, ${spanData('s')}
        FROM spans s JOIN seal_versions v ON v.org_id = s.org_id AND v.trace_key = s.trace_key
        WHERE s.seq > $1 AND s.seq <= $2
        UNION ALL
        SELECT v.org_id, v.skill AS of_skill, v.versions, s.workspace_id, s.trace_key, ${spanData('s')}
        FROM spans s JOIN seal_changed c ON c.org_id = s.org_id AND c.trace_key = s.trace_key
        JOIN seal_versions v ON v.org_id = c.org_id AND v.trace_key = c.trace_key AND v.skill = c.skill
        WHERE s.seq <= $1
      ) r JOIN skill_keys k ON k.org_id = r.org_id AND k.skill = r.of_skill`,
      range,
    );
    await conn.run('INSERT INTO skill_spans SELECT * FROM seal_rows ORDER BY of_key, start_s');
    await markCrossing(conn);
    await conn.run('UPDATE sealed SET seq = $1', [to]);
    for (const t of ['seal_changed', 'seal_versions', 'seal_rows', 'seal_days']) await conn.run(`DROP TABLE ${t}`);
    await conn.run('COMMIT');
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Records this step's day bounds per (skill, trace) and the pairs that now span several days. */
async function markCrossing(conn: DuckDBConnection): Promise<void> {
  await conn.run(`CREATE OR REPLACE TEMP TABLE seal_days AS
    SELECT of_key, trace_key, min(start_s // 86400)::INTEGER AS min_day, max(start_s // 86400)::INTEGER AS max_day
    FROM seal_rows GROUP BY of_key, trace_key`);
  await conn.run(`INSERT INTO skill_crossing
    SELECT d.of_key, d.trace_key FROM seal_days d
    LEFT JOIN (SELECT of_key, trace_key, min(min_day) AS lo, max(max_day) AS hi FROM skill_trace_days
      WHERE trace_key IN (SELECT trace_key FROM seal_days) GROUP BY of_key, trace_key) o
      ON o.of_key = d.of_key AND o.trace_key = d.trace_key
    WHERE least(d.min_day, COALESCE(o.lo, d.min_day)) <> greatest(d.max_day, COALESCE(o.hi, d.max_day))
      AND NOT EXISTS (SELECT 1 FROM skill_crossing c WHERE c.of_key = d.of_key AND c.trace_key = d.trace_key)`);
  await conn.run('INSERT INTO skill_trace_days SELECT * FROM seal_days');
}
