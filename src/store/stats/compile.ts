/**
 * The statistics compiler's entry point: compiles an AggregateQuery into one SQL statement for
 * DuckDB or PostgreSQL over rows an engine supplies (its `RowSource`, row-source.ts: the spans of
 * the skill's traces, whatever its storage layout). Identifiers come only from whitelists (the
 * measure catalogue, the dimension columns); every value is a numbered parameter.
 *
 * Each measure is computed from "parts" (measures.ts): additive ones (counts and sums), distinct
 * counts, percentiles, harness metric sums (harness-metrics.ts) and evaluation counts and sums
 * (evaluations.ts). Per-bucket rows come from one GROUP BY over the rows; the per-group totals
 * that rank the groups of a time series are summed
 * from the bucket rows where that is exact (series.ts). With `top` or `onlyGroups` the statement
 * keeps only some groups (ranking.ts); without them it is the aggregation alone, unchanged. The
 * predicates over span columns are in filters.ts, what differs per engine in dialect.ts, and the
 * decoding of result rows in decode.ts.
 */
import { MEASURES, type AggregateQuery, type Measure } from '../trace-port.ts';
import { EVALUATION_MEASURES } from '../evaluation-row.ts';
import { DUCKDB, numberedParams, type Param, type SqlDialect } from './dialect.ts';
import { commonWhere, inListSql, storedValue } from './filters.ts';
import { metricSelect } from './harness-metrics.ts';
import { evaluationGroupedSql, evaluationSelect, groupsByEvaluation } from './evaluations.ts';
import {
  PARTS,
  PART_COLUMNS,
  SUMMABLE,
  finalSql,
  isEvaluationPart,
  isJoinedPart,
  isMetricPart,
  partSql,
  type Part,
  type SummedPart,
} from './measures.ts';
import { keepGroupsSql, onlyGroupsRowsSql, type GroupColumns } from './ranking.ts';
import { BASE_COLUMNS, DIMENSION_COLUMN, isSpanDimension, type RowSource } from './row-source.ts';
import { bucketSql, combineSql, groupedSeriesSql } from './series.ts';

export interface CompiledAggregate {
  sql: string;
  params: (string | number)[];
}

const isEvaluationMeasure = (m: Measure) => (EVALUATION_MEASURES as readonly string[]).includes(m);

/** The group columns of a query as the ranking SQL sees them (ranking.ts). */
function groupColumns(q: AggregateQuery, source: RowSource, param: Param, dialect: SqlDialect): GroupColumns {
  return {
    dialect,
    groupBy: q.groupBy,
    param,
    type: (d) => (d === 'skill_version' || source.codes?.(d) !== undefined ? 'integer' : 'text'),
    encode: (d, v) => storedValue(source, d, v),
    sortKey: (d, column) => source.codes?.(d)?.sortKey(column) ?? column,
    inList: (column, values) => inListSql(column, values, param, dialect),
  };
}

/**
 * The statement for `q` over `source`. With group_by, `top` and `onlyGroups` keep only some groups
 * (ranking.ts); without them the statement is the aggregation alone. `onlyGroups` without
 * `top` narrows the rows before aggregating (a group's values depend on its own rows only); with
 * `top` the groups are ranked among all of them first, then both conditions must hold.
 */
export function compileAggregate(
  q: AggregateQuery,
  source: RowSource,
  dialect: SqlDialect = DUCKDB,
): CompiledAggregate {
  const { params, param } = numberedParams();
  const grouped = q.groupBy.length > 0;
  const top = grouped ? q.top : undefined;
  const only = grouped ? q.onlyGroups : undefined;
  const cols = groupColumns(q, source, param, dialect);
  // Spans have no evaluation name: rows are narrowed to listed groups by span dimensions only.
  const byName = groupsByEvaluation(q);
  const narrow =
    only !== undefined && top === undefined && !byName
      ? () => onlyGroupsRowsSql(only, (d) => (isSpanDimension(d) ? DIMENSION_COLUMN[d] : 'NULL'), cols)
      : null;
  // Ranked measures are computed even when not asked for (they are not returned).
  const ranked = (top ?? [])
    .map((r) => r.by)
    .filter((by): by is Measure => (MEASURES as readonly string[]).includes(by));
  const measures = [...new Set([...q.measures, ...ranked])];
  if ((byName || q.filters.some((f) => f.key === 'evaluation')) && !measures.every(isEvaluationMeasure))
    throw new Error('the evaluation dimension groups and filters the evaluation measures only');
  const parts = [...new Set(measures.flatMap((m) => PARTS[m]))];
  const spanDims = q.groupBy.filter(isSpanDimension);
  const dimCols = spanDims.map((d) => DIMENSION_COLUMN[d]);
  const groups = spanDims.map((d) => `"g_${d}"`);
  const outKeys = [...q.groupBy.map((d) => `"g_${d}"`), ...(q.bucket !== undefined ? ['bucket'] : [])];
  const columns = [...outKeys, ...measures.map((m) => `"m_${m}"`)];
  const finals = measures.map((m) => `${finalSql(m)} AS "m_${m}"`);
  const summed = summedSeries(q, source, parts, {
    param,
    dialect,
    rest: () => commonWhere(q, source, param, dialect, narrow, false),
  });
  // The placeholders of a summed statement that was not written are dropped with it.
  if (summed === null) params.length = 0;
  const sql =
    summed !== null
      ? `SELECT ${[...outKeys, ...finals].join(', ')} FROM (${summed}) series`
      : rowsAggregate(q, source, { parts, dimCols, groups, outKeys, finals, param, dialect, narrow });
  // onlyGroups is checked on the result unless the rows were narrowed to exactly its groups (one dimension, no top).
  const exactOnly = only !== undefined && (top !== undefined || q.groupBy.length > 1 || byName) ? only : undefined;
  if (top === undefined && exactOnly === undefined) return { sql, params };
  return { sql: keepGroupsSql(sql, columns, q.bucket !== undefined, cols, { top, only: exactOnly }), params };
}

/** The query's summed series from the source's rollups (RowSource.summed), when its shape allows and the source can. */
function summedSeries(
  q: AggregateQuery,
  source: RowSource,
  parts: readonly Part[],
  o: { param: Param; dialect: SqlDialect; rest: () => string },
): string | null {
  if (source.summed === undefined || q.groupBy.length > 1) return null;
  const dim = q.groupBy[0];
  if (dim !== undefined && !isSpanDimension(dim)) return null;
  if (q.filters.some((f) => f.key !== dim)) return null;
  if (!parts.every((p): p is SummedPart => SUMMABLE.has(p))) return null;
  return source.summed(q, {
    parts,
    group: dim === undefined ? null : { dim, column: DIMENSION_COLUMN[dim], out: `"g_${dim}"` },
    bucket: q.bucket === undefined ? null : (column) => bucketSql(q.bucket as 'day' | 'week', o.dialect, column),
    totals: q.bucket !== undefined && dim !== undefined,
    rest: o.rest(),
    param: o.param,
    dialect: o.dialect,
  });
}

/** The statement over every row of the source (the compiler's own aggregation). */
function rowsAggregate(
  q: AggregateQuery,
  source: RowSource,
  o: {
    parts: Part[];
    dimCols: string[];
    groups: string[];
    outKeys: string[];
    finals: string[];
    param: Param;
    dialect: SqlDialect;
    narrow: (() => string) | null;
  },
): string {
  const { parts, dimCols, groups, outKeys, finals, param, dialect } = o;
  const grouped = q.groupBy.length > 0;
  const rows = source.sql(q, commonWhere(q, source, param, dialect, o.narrow), param);
  // A materialized source keeps only the columns the aggregation reads, where the engine does not
  // prune them itself: the dimensions not grouped by were needed by the filters alone, which the
  // source has applied.
  const base =
    source.rescan || dialect.prunesColumns
      ? rows
      : `SELECT ${[...new Set([...BASE_COLUMNS, ...parts.flatMap((p) => PART_COLUMNS[p] ?? []), ...dimCols])].join(', ')} FROM (${rows}) source_rows`;
  const metricParts = parts.filter(isMetricPart);
  const evaluationParts = parts.filter(isEvaluationPart);
  const bucket = q.bucket === undefined ? null : bucketSql(q.bucket, dialect);
  const metrics =
    metricParts.length === 0 ? null : metricSelect(q, metricParts, dimCols, groups, bucket, param, dialect);
  const evaluations =
    evaluationParts.length === 0
      ? null
      : evaluationSelect(q, evaluationParts, { dimCols, groups, bucket }, param, dialect);
  // A query with harness or evaluation measures reads the rows twice (their sessions or traces too).
  const reuse = source.rescan ? 'NOT MATERIALIZED' : 'MATERIALIZED';
  let sql: string;
  if (groupsByEvaluation(q)) {
    // Every group and bucket is an evaluation's (its measures are all evaluation measures).
    const series = evaluationGroupedSql(evaluationParts, outKeys.slice(0, q.groupBy.length), bucket !== null);
    sql = `WITH base AS ${reuse} (${base}),\neb AS MATERIALIZED (${evaluations as string})\nSELECT ${[...outKeys, ...finals].join(', ')} FROM (${series}) series`;
  } else if (bucket !== null && grouped) {
    // Only `traces` needs the crossing traces; placeholders are made only for SQL that is written.
    const crossing = !parts.includes('traces')
      ? ''
      : (source.crossingTraces?.(q, param) ??
        `SELECT trace_key FROM base GROUP BY trace_key HAVING MIN(${bucket}) <> MAX(${bucket})`);
    const series = groupedSeriesSql(
      { parts, groups, dimCols, bucket, dialect, metrics, evaluations },
      base,
      reuse,
      crossing,
    );
    sql = `SELECT ${[...outKeys, ...finals].join(', ')} FROM (${series}) series`;
  } else {
    // No bucket totals: one GROUP BY (its group rows are what a table ranks), or none, for one row even over no rows.
    const keyCols = [...dimCols, ...(bucket === null ? [] : [bucket])];
    const keys = [
      ...dimCols.map((c, i) => `${c} AS ${groups[i]}`),
      ...(bucket === null ? [] : [`${bucket} AS bucket`]),
    ];
    const groupBy = keyCols.length > 0 ? `GROUP BY ${keyCols.join(', ')}` : '';
    const joined = [
      ...(metrics === null ? [] : [{ from: `(${metrics}) mb`, owns: isMetricPart }]),
      ...(evaluations === null ? [] : [{ from: `(${evaluations}) eb`, owns: isEvaluationPart }]),
    ];
    const gb =
      joined.length === 0
        ? `SELECT ${[...keys, ...parts.map((p) => `${partSql(p, dialect)} AS p_${p}`)].join(', ')} FROM base ${groupBy}`
        : // The span rows make the groups (also those whose spans have no session or evaluation); the joined rows add to them.
          combineSql(
            outKeys,
            parts,
            [
              { from: 'base', keys, groupBy, set: (p) => (isJoinedPart(p) ? null : partSql(p, dialect)) },
              ...joined.map((j) => ({
                from: j.from,
                keys: outKeys,
                groupBy: '',
                set: (p: Part) => (j.owns(p) ? `p_${p}` : null),
              })),
            ],
            dialect,
          );
    sql = `WITH base AS ${joined.length === 0 ? 'NOT MATERIALIZED' : reuse} (${base})\nSELECT ${[...outKeys, ...finals].join(', ')} FROM (${gb}) gb`;
  }
  return sql;
}
