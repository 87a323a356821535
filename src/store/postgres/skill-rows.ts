/**
 * The rows a PostgreSQL statistics query reads for skill S (and version v): the sealed ones from
 * `skill_spans`, plus, while sealing lags behind ingestion, two tails read from `spans`:
 *
 *   unsealed spans (xid >= W) of traces with a mapping to S;
 *   sealed spans (xid < W) of traces whose mappings to S are all unsealed.
 *
 * With sealing.ts's invariant the three sets are disjoint and together hold every span of S's
 * traces (the same reading as duckdb/skill-rows.ts). W is read in the statement's own snapshot
 * (the store runs both in one REPEATABLE READ transaction) and bound as a value, so the planner
 * knows how few rows lie above it.
 */
import type pg from 'pg';
import type { AggregateQuery, SkillSubject } from '../trace-port.ts';
import { SOURCE_COLUMNS, spanSourceColumns, type RowSource, type SummedShape } from '../stats/row-source.ts';
import type { Param } from '../stats/dialect.ts';
import { summedSql } from './summed-rows.ts';

const SEALED_COLUMNS = SOURCE_COLUMNS.join(', ');
const SPAN_COLUMNS = spanSourceColumns('trace_id::uuid');

export interface SealedMarks {
  /** sealed.w, as text. */
  watermark: string;
  /** Whether any span, or any mapping, has xid >= W (else its tail is left out: it is empty). */
  unsealedSpans: boolean;
  unsealedMappings: boolean;
  /** Whether statistics may sum the rollups (summed-rows.ts); off, every query reads rows. */
  rollups: boolean;
}

/**
 * The watermark and whether anything lies above it, in the caller's transaction (max() reads one
 * end of each xid index; an EXISTS correlated with w would scan).
 */
export async function sealedMarks(client: pg.ClientBase, rollups: boolean): Promise<SealedMarks> {
  const marks = await client.query<{ w: string; spans: boolean; mappings: boolean }>(
    `SELECT w::text AS w, COALESCE((SELECT max(xid) FROM spans) >= w, false) AS spans,
    COALESCE((SELECT max(xid) FROM trace_skills) >= w, false) AS mappings FROM sealed`,
  );
  const { w, spans, mappings } = marks.rows[0] as { w: string; spans: boolean; mappings: boolean };
  return { watermark: w, unsealedSpans: spans, unsealedMappings: mappings, rollups };
}

export function skillRows(subject: SkillSubject, marks: SealedMarks): RowSource {
  /** The tails' SELECTs (none while everything is sealed). */
  function tails(where: string, param: Param, org: string, skill: string, version: string | null): string[] {
    if (!marks.unsealedSpans && !marks.unsealedMappings) return [];
    const w = `${param(marks.watermark)}::xid8`;
    const maps = (alias: string) =>
      `${alias}.org_id = ${org} AND ${alias}.skill = ${skill}${version === null ? '' : ` AND ${alias}.skill_version = ${version}`}`;
    const branches: string[] = [];
    if (marks.unsealedSpans)
      branches.push(`SELECT ${SPAN_COLUMNS} FROM spans
WHERE org_id = ${org} AND xid >= ${w} AND ${where}
AND EXISTS (SELECT 1 FROM trace_skills m WHERE ${maps('m')} AND m.trace_id = spans.trace_id)`);
    if (marks.unsealedMappings)
      branches.push(`SELECT ${SPAN_COLUMNS} FROM spans
WHERE org_id = ${org} AND xid < ${w} AND ${where}
AND trace_id IN (SELECT m.trace_id FROM trace_skills m WHERE m.xid >= ${w} AND ${maps('m')}
  AND NOT EXISTS (SELECT 1 FROM trace_skills o WHERE ${maps('o')} AND o.trace_id = m.trace_id AND o.xid < ${w}))`);
    return branches;
  }
  return {
    // A bitmap scan of the skill's rows and possibly two joins: kept once rather than read again.
    rescan: false,
    sql(q, where, param) {
      const org = param(q.orgId);
      const skill = param(subject.skill);
      const version = subject.skillVersion === undefined ? null : param(subject.skillVersion);
      const sealed = `SELECT ${SEALED_COLUMNS} FROM skill_spans
WHERE org_id = ${org} AND of_skill = ${skill}${version === null ? '' : ` AND ${version} = ANY(of_versions)`} AND ${where}`;
      return [sealed, ...tails(where, param, org, skill, version)].join('\nUNION ALL ');
    },
    ...(marks.rollups && {
      summed: (q: AggregateQuery, shape: SummedShape) =>
        summedSql(q, subject, shape, (where, org, skill) => tails(where, shape.param, org, skill, null)),
    }),
  };
}
