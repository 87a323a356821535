/**
 * The summed form of a PostgreSQL statistics query (stats/row-source.ts SummedShape): the sealed full
 * UTC days of the range come from `skill_rollup`, everything else from rows, so a query reads a
 * few rows per day and dimension values instead of every span (rollups.ts has the invariants):
 *
 *   rows: sealed spans in the partial days at either end of the range, the unsealed tails, and the
 *         sealed spans inside the full days of special pairs (and of traces with tail rows);
 *   counts and tokens = rollup sums + the sums of the end and tail rows;
 *   traces = rollup marks - the marks of the special pairs' rows + the distinct traces of all rows;
 *   percentiles = over the invocations of the range (an index holds them apart).
 *
 * Pairs that are not special lie on one day in one workspace, so within the full days their
 * marks count each trace once per group (and per bucket, and over the range); a trace with tail
 * rows in the range is counted from its rows, sealed ones included.
 */
import { summedQuantile, type SummedPart } from '../stats/measures.ts';
import type { SummedShape } from '../stats/row-source.ts';
import type { AggregateQuery, SkillSubject } from '../trace-port.ts';
import { inRollups, markBit, markColumn } from './rollups.ts';

const DAY = 86400;

/** What each part sums in the rollups, and over the end and tail rows (`adds` = 1). */
const ADDITIVE: Partial<Record<SummedPart, { rollup: string; rows: string }>> = {
  spans: { rollup: 'SUM(spans)', rows: 'COUNT(*) FILTER (WHERE adds = 1)' },
  inv: { rollup: 'SUM(inv)', rows: 'COUNT(*) FILTER (WHERE adds = 1 AND is_invocation)' },
  err: { rollup: 'SUM(err)', rows: 'COUNT(*) FILTER (WHERE adds = 1 AND is_invocation AND is_error)' },
  tool: { rollup: 'SUM(tool_calls)', rows: 'COUNT(*) FILTER (WHERE adds = 1 AND is_tool_call)' },
  tokens: { rollup: 'SUM(tokens)', rows: 'SUM(tokens) FILTER (WHERE adds = 1)' },
};

/**
 * The summed SQL, or null when the query names a skill version (the rollups do not keep the
 * versions of a trace), groups by a dimension they do not keep, or its range holds no full day. `tails` are the unsealed rows' SELECTs over
 * the range (skill-rows.ts), given the range's predicate and the placeholders of the organization
 * and skill; empty when everything is sealed.
 */
export function summedSql(
  q: AggregateQuery,
  subject: SkillSubject,
  shape: SummedShape,
  tails: (where: string, org: string, skill: string) => string[],
): string | null {
  if (subject.skillVersion !== undefined) return null;
  if (shape.group !== null && !inRollups(shape.group.column)) return null;
  const first = Math.ceil(q.startS / DAY) * DAY;
  const last = Math.floor(q.endS / DAY) * DAY;
  if (last <= first) return null;
  const { param, group, bucket } = shape;
  const dbl = shape.dialect.double;
  const org = param(q.orgId);
  const skill = param(subject.skill);
  const d0 = param(first);
  const d1 = param(last);
  const inRange = `start_s >= ${param(q.startS)} AND start_s < ${param(q.endS)} AND ${shape.rest}`;
  const inDays = `start_s >= ${d0} AND start_s < ${d1}`;
  const ofSkill = `org_id = ${org} AND of_skill = ${skill}`;
  const column = group?.column ?? null;
  const cols = ['trace_key', 'start_s', ...(column === null ? [] : [column])];
  const rowCols = [...cols, 'is_invocation', 'is_tool_call', 'is_error', 'tokens'].join(', ');
  const tailSql = tails(inRange, org, skill);
  const ctes: string[] = [];
  if (tailSql.length > 0) ctes.push(`tail AS MATERIALIZED (${tailSql.join('\nUNION ALL ')})`);
  ctes.push(
    `sp AS MATERIALIZED (SELECT trace_key FROM skill_special WHERE ${ofSkill} AND last_s >= ${d0} AND first_s < ${d1}${tailSql.length > 0 ? ' UNION SELECT trace_key FROM tail' : ''})`,
  );
  const bit = markBit(column);
  ctes.push(`raw AS MATERIALIZED (SELECT ${rowCols}, 1 AS adds, 0 AS marked FROM skill_spans
WHERE ${ofSkill} AND ${inRange} AND NOT (${inDays})
UNION ALL SELECT ${rowCols}, 0 AS adds, CASE WHEN firsts & ${bit} <> 0 THEN 1 ELSE 0 END AS marked FROM skill_spans
WHERE ${ofSkill} AND ${inRange} AND ${inDays} AND trace_key IN (SELECT trace_key FROM sp)${
    tailSql.length > 0 ? `\nUNION ALL SELECT ${rowCols}, 1 AS adds, 0 AS marked FROM tail` : ''
  })`);

  // Keys of each branch over a table whose time column is `time`, and its GROUP BY.
  const keysOf = (time: string) => [
    ...(group === null ? [] : [`${group.column} AS ${group.out}`]),
    ...(bucket === null ? [] : [`${bucket(time)} AS bucket`]),
  ];
  const groupByOf = (time: string) => {
    const full = [...(group === null ? [] : [group.column]), ...(bucket === null ? [] : [bucket(time)])];
    if (full.length === 0) return '';
    return shape.totals
      ? `GROUP BY GROUPING SETS ((${full.join(', ')}), (${group?.column ?? ''}))`
      : `GROUP BY ${full.join(', ')}`;
  };
  const outKeys = [...(group === null ? [] : [group.out]), ...(bucket === null ? [] : ['bucket'])];
  const none = `NULL::${dbl}`;
  const branch = (keys: string[], from: string, groupBy: string, set: (p: SummedPart) => string | null) =>
    `SELECT ${[...keys, ...shape.parts.map((p) => `${set(p) === null ? none : `(${set(p)})::${dbl}`} AS p_${p}`)].join(', ')} FROM ${from} ${groupBy}`;
  const branches = [
    branch(
      keysOf('day_s'),
      `skill_rollup WHERE ${ofSkill} AND day_s >= ${d0} AND day_s < ${d1} AND ${shape.rest}`,
      groupByOf('day_s'),
      (p) => (p === 'traces' ? `SUM(${markColumn(column)})` : (ADDITIVE[p]?.rollup ?? null)),
    ),
    branch(keysOf('start_s'), 'raw', groupByOf('start_s'), (p) =>
      p === 'traces' ? 'COUNT(DISTINCT trace_key) - SUM(marked)' : (ADDITIVE[p]?.rows ?? null),
    ),
  ];
  if (shape.parts.some((p) => summedQuantile(p, shape.dialect, 'duration_ms') !== null)) {
    const invocationCols = [...cols, 'duration_ms'].join(', ');
    const invocations = [
      `SELECT ${invocationCols} FROM skill_spans WHERE ${ofSkill} AND is_invocation AND ${inRange}`,
      ...(tailSql.length > 0 ? [`SELECT ${invocationCols} FROM tail WHERE is_invocation`] : []),
    ];
    branches.push(
      branch(keysOf('start_s'), `(${invocations.join(' UNION ALL ')}) invocations`, groupByOf('start_s'), (p) =>
        summedQuantile(p, shape.dialect, 'duration_ms'),
      ),
    );
  }
  const sums = shape.parts.map((p) => `SUM(p_${p}) AS p_${p}`);
  return `WITH ${ctes.join(',\n')}
SELECT ${[...outKeys, ...sums].join(', ')} FROM (${branches.join('\nUNION ALL ')}) branches${
    outKeys.length > 0 ? ` GROUP BY ${outKeys.join(', ')}` : ''
  }`;
}
