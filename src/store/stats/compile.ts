/**
 * Compiles an AggregateQuery into one SQL statement for DuckDB or PostgreSQL over rows an engine
 * supplies (its `RowSource`: the spans of the skill's traces, whatever its storage layout).
 * Identifiers come only from the whitelists below; every value is a numbered parameter.
 *
 * Each measure is computed from "parts": additive ones (counts and sums), distinct counts and
 * percentiles. Per-bucket rows come from one GROUP BY over the rows; the per-group totals that rank
 * the groups of a time series are summed from the bucket rows where that is exact (totalsSql).
 * This costs less than GROUPING SETS, which recompute every measure for the totals. With `top`
 * or `onlyGroups` the statement keeps only some groups (stats-ranking.ts); without them it is the
 * aggregation alone, unchanged.
 */
import { keepGroupsSql, onlyGroupsRowsSql, type GroupColumns } from './ranking.ts';
import {
  HARNESS_MEASURES,
  MEASURES,
  type AggregateQuery,
  type AggregateRow,
  type Dimension,
  type HarnessMeasure,
  type Measure,
  type SpanFilter,
} from '../trace-port.ts';
import { DUCKDB, type Param, type SqlDialect } from './dialect.ts';
import { sqlText } from '../sql-values.ts';
import { SPAN_DIMENSION_COLUMNS, SPAN_MEASURE_COLUMNS } from './span-columns.ts';

/** The span (and rollup) column of each dimension. */
const DIMENSION_COLUMN: Record<Dimension, string> = {
  harness: 'harness',
  skill: 'skill',
  skill_version: 'skill_version',
  command: 'command',
  mcp: 'mcp',
  tool: 'tool',
  model: 'model',
  user: 'user_id',
};

/**
 * The columns every source yields, under these names: `trace_key` identifies the trace (any type
 * with equality), `is_invocation` and `is_tool_call` are the span's category as booleans (cheaper
 * to test than strings), the others are the span columns of store/trace-port.ts SpanRow.
 */
export const SOURCE_COLUMNS = [
  'trace_key',
  'workspace_id',
  ...SPAN_DIMENSION_COLUMNS,
  'is_invocation',
  'is_tool_call',
  ...SPAN_MEASURE_COLUMNS,
] as const;

/** SOURCE_COLUMNS as a select list over a table of span rows (with `category` and its trace column). */
export function spanSourceColumns(traceColumn: string): string {
  const expr: Partial<Record<(typeof SOURCE_COLUMNS)[number], string>> = {
    trace_key: `${traceColumn} AS trace_key`,
    is_invocation: "category = 'skill_invocation' AS is_invocation",
    is_tool_call: "category = 'tool_call' AS is_tool_call",
  };
  return SOURCE_COLUMNS.map((c) => expr[c] ?? c).join(', ');
}

/** The source columns every aggregation may read besides the grouped dimensions. */
const BASE_COLUMNS = [
  'trace_key',
  'start_s',
  'workspace_id',
  'user_id',
  'session_id',
  'is_invocation',
  'is_tool_call',
  ...SPAN_MEASURE_COLUMNS,
];

/**
 * An engine's rows of the query's skill (and version), as one SELECT of SOURCE_COLUMNS. `where`
 * (time range, workspaces, filters, over the span columns) must hold in every branch of it.
 * `rescan`: reading the rows again is cheaper than keeping them (a scan of stored, clustered rows);
 * otherwise a query that reads them more than once materializes them first (a join).
 */
export interface RowSource {
  sql(q: AggregateQuery, where: string, param: Param): string;
  rescan: boolean;
  /**
   * A SELECT of trace_key holding at least every trace whose rows fall into more than one bucket
   * (any superset is exact, only slower), when the engine keeps such a list; else the compiler
   * groups the rows by trace.
   */
  crossingTraces?(q: AggregateQuery, param: Param): string | null;
  /** How the engine stores `dim` when its column holds codes instead of values (absent: the values). */
  codes?(dim: Dimension): DimensionCodes | undefined;
  /**
   * The parts of a query the compiler found summable (SummedShape) from the engine's rollups
   * instead of every row, or null when the engine cannot answer this one that way.
   */
  summed?(q: AggregateQuery, shape: SummedShape): string | null;
}

/**
 * A query whose parts an engine may sum from rollups: at most one group dimension, filters on that
 * dimension only, and parts that are counts, token sums, distinct traces (summed marks, see
 * postgres/rollups.ts) or percentiles (read from the invocations). The engine's SQL yields the
 * output group column, `bucket` (with a bucket) and p_<part> for each part; a grouped time series
 * also has a totals row per group with a null bucket, as the compiler's own series.
 */
export interface SummedShape {
  parts: readonly SummedPart[];
  /** The grouped dimension's column, or null. */
  group: { dim: Dimension; column: string; out: string } | null;
  /** The bucket start of a column of Unix seconds, or null without a bucket. */
  bucket: ((column: string) => string) | null;
  /** Whether a totals row per group is asked for (a grouped time series). */
  totals: boolean;
  /**
   * The predicate on span (and rollup) columns besides the time range: workspaces, filters,
   * onlyGroups. Its placeholders are bound once; the engine may repeat it in several branches.
   */
  rest: string;
  param: Param;
  dialect: SqlDialect;
}

const SUMMED_PARTS = ['spans', 'inv', 'err', 'tool', 'tokens', 'traces', 'p50', 'p90', 'p99'] as const;
export type SummedPart = (typeof SUMMED_PARTS)[number];
const SUMMABLE = new Set<string>(SUMMED_PARTS);

/** The nearest-rank percentile of a summed quantile part, over `column` (an ordered-set aggregate). */
export const summedQuantile = (p: SummedPart, dialect: SqlDialect, column: string): string | null =>
  QUANTILE[p] === undefined ? null : dialect.percentile(QUANTILE[p], column);

/** An engine's integer codes for a dimension's values (DuckDB's dictionary). */
export interface DimensionCodes {
  /** The code of a value (filters and group lists bind it); a value no span has gets a code no span has. */
  encode(value: string | number): number;
  /** SQL of the text a column of codes stands for: rankings break ties by it, not by the code. */
  sortKey(column: string): string;
}

export interface CompiledAggregate {
  sql: string;
  params: (string | number)[];
}

const INVOCATION = 'is_invocation';

type Part =
  | 'spans'
  | 'inv'
  | 'err'
  | 'tool'
  | 'tokens'
  | 'cost'
  | 'traces'
  | 'sessions'
  | 'users'
  | 'p50'
  | 'p90'
  | 'p99'
  | HarnessMeasure;

const PARTS: Record<Measure, Part[]> = {
  sessions: ['sessions'],
  traces: ['traces'],
  spans: ['spans'],
  skill_invocations: ['inv'],
  tool_calls: ['tool'],
  tokens: ['tokens'],
  active_users: ['users'],
  error_rate: ['inv', 'err'],
  success_rate: ['inv', 'err'],
  tokens_per_trace: ['tokens', 'traces'],
  cost: ['cost'],
  latency_p50: ['p50'],
  latency_p90: ['p90'],
  latency_p99: ['p99'],
  lines_added: ['lines_added'],
  lines_removed: ['lines_removed'],
  commits: ['commits'],
  pull_requests: ['pull_requests'],
  active_time: ['active_time'],
};
/** Parts summed from the metric points of the groups' sessions (metricBranch), not from span rows. */
const isMetricPart = (p: Part): p is HarnessMeasure => (HARNESS_MEASURES as readonly Part[]).includes(p);
const ADDITIVE = new Set<Part>(['spans', 'inv', 'err', 'tool', 'tokens', 'cost']);
const DISTINCT = new Set<Part>(['traces', 'sessions', 'users']);
const QUANTILE: Partial<Record<Part, number>> = { p50: 0.5, p90: 0.9, p99: 0.99 };

const dbl = (dialect: SqlDialect) => dialect.double;

/** Exact nearest-rank percentile of skill-invocation durations; `filtered` when other rows are present. */
function percentileSql(q: number, dialect: SqlDialect, filtered: boolean): string {
  const agg = dialect.percentile(q, 'duration_ms');
  return filtered ? `${agg} FILTER (WHERE ${INVOCATION})` : agg;
}

/** A part over raw rows, as a double so that every branch of a UNION has the same type. */
function partSql(p: Part, dialect: SqlDialect): string {
  const sql = ((): string => {
    switch (p) {
      case 'spans':
        return 'COUNT(*)';
      case 'inv':
        return `COUNT(*) FILTER (WHERE ${INVOCATION})`;
      case 'err':
        return `COUNT(*) FILTER (WHERE ${INVOCATION} AND is_error)`;
      case 'tool':
        return 'COUNT(*) FILTER (WHERE is_tool_call)';
      case 'tokens':
        return 'COALESCE(SUM(tokens), 0)';
      case 'cost':
        return 'COALESCE(SUM(cost), 0)';
      case 'traces':
        return 'COUNT(DISTINCT trace_key)';
      case 'sessions':
        return 'COUNT(DISTINCT session_id)';
      case 'users':
        return 'COUNT(DISTINCT user_id)';
      case 'p50':
      case 'p90':
      case 'p99':
        return percentileSql(QUANTILE[p] as number, dialect, true);
      default:
        throw new Error(`part ${p} is summed from metric points, not from span rows`);
    }
  })();
  return `(${sql})::${dbl(dialect)}`;
}

/** A measure from its parts (columns p_<part>). */
function finalSql(m: Measure): string {
  const errorRate = 'p_err / NULLIF(p_inv, 0)';
  // Counts are 0, not null, in a bucket that has metric points and no spans.
  const count = (part: Part) => `COALESCE(p_${part}, 0)`;
  switch (m) {
    case 'sessions':
      return count('sessions');
    case 'traces':
      return count('traces');
    case 'spans':
      return count('spans');
    case 'skill_invocations':
      return count('inv');
    case 'tool_calls':
      return count('tool');
    case 'tokens':
      return count('tokens');
    case 'active_users':
      return count('users');
    case 'error_rate':
      return errorRate;
    case 'success_rate':
      return `1 - ${errorRate}`;
    case 'tokens_per_trace':
      return 'p_tokens / NULLIF(p_traces, 0)';
    case 'cost':
      return count('cost');
    case 'lines_added':
    case 'lines_removed':
    case 'commits':
    case 'pull_requests':
    case 'active_time':
      return count(m);
    case 'latency_p50':
      return 'p_p50';
    case 'latency_p90':
      return 'p_p90';
    case 'latency_p99':
      return 'p_p99';
  }
}

/** Bucket start in Unix seconds: UTC days, or ISO weeks (Monday; 1970-01-01 was a Thursday, hence +3). */
function bucketSql(bucket: 'day' | 'week', dialect: SqlDialect, column = 'start_s'): string {
  const day = dialect.intDiv(column, '86400');
  return bucket === 'day' ? `${day} * 86400` : `(${day} - ((${day} + 3) % 7)) * 86400`;
}

/** `col IN (values)`, as the dialect writes it. */
function inListSql(col: string, values: readonly (string | number)[], param: Param, dialect: SqlDialect): string {
  if (values.length === 0) return 'FALSE';
  const placeholders = values.map(param).join(', ');
  return dialect.inList(col, placeholders);
}

function filterSql(
  f: SpanFilter,
  param: Param,
  dialect: SqlDialect,
  encode: (v: string | number) => string | number,
): string {
  const col = DIMENSION_COLUMN[f.key];
  switch (f.op) {
    case 'exists':
      return `${col} IS NOT NULL`;
    case 'not_exists':
      return `${col} IS NULL`;
    case 'eq':
      return `${col} = ${param(encode(f.values[0] as string | number))}`;
    case 'neq':
      return `(${col} IS NULL OR ${col} <> ${param(encode(f.values[0] as string | number))})`;
    case 'in':
      return inListSql(col, f.values.map(encode), param, dialect);
  }
}

/** The stored value of a dimension value: its code when the source encodes the dimension. */
const storedValue = (source: RowSource, dim: Dimension, v: string | number): string | number =>
  source.codes?.(dim)?.encode(v) ?? v;

/**
 * The predicate every source applies to its span columns: time range (unless `time` is false: a
 * summed query bounds its rollups by days), workspaces, filters, and `extra` (the rows of
 * onlyGroups, when they can be narrowed before aggregating).
 */
function commonWhere(
  q: AggregateQuery,
  source: RowSource,
  param: Param,
  dialect: SqlDialect,
  extra: (() => string) | null,
  time = true,
): string {
  return [
    ...(time ? [`start_s >= ${param(q.startS)}`, `start_s < ${param(q.endS)}`] : []),
    inListSql('workspace_id', q.workspaceIds, param, dialect),
    ...q.filters.map((f) => filterSql(f, param, dialect, (v) => storedValue(source, f.key, v))),
    ...(extra === null ? [] : [extra()]),
  ].join(' AND ');
}

/** The group columns of a query as the ranking SQL sees them (stats-ranking.ts). */
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
 * The harness metric parts per group (and bucket, by each point's own time), as p_<part> columns
 * under the output key names. A point counts for a group when its (workspace, session) is one of
 * the group's selected rows (`base`) anywhere in the range: a caller who may write to one workspace
 * cannot add to the sessions of another. Points of another organization, of a workspace outside
 * the query's or outside [start, end) never count.
 */
function metricSelect(
  q: AggregateQuery,
  parts: readonly HarnessMeasure[],
  dimCols: readonly string[],
  groups: readonly string[],
  bucket: string | null,
  param: Param,
  dialect: SqlDialect,
): string {
  const points = `SELECT workspace_id AS metric_workspace, session_id AS metric_session, time_s AS start_s, metric, value AS metric_value FROM metric_points
WHERE org_id = ${param(q.orgId)} AND time_s >= ${param(q.startS)} AND time_s < ${param(q.endS)} AND ${inListSql('workspace_id', q.workspaceIds, param, dialect)}`;
  const sessions = `SELECT DISTINCT ${[...dimCols, 'workspace_id', 'session_id'].join(', ')} FROM base WHERE session_id IS NOT NULL`;
  const keyCols = [...dimCols.map((c) => `gs.${c}`), ...(bucket === null ? [] : [bucket])];
  const keys = [
    ...dimCols.map((c, i) => `gs.${c} AS ${groups[i]}`),
    ...(bucket === null ? [] : [`${bucket} AS bucket`]),
  ];
  // Part names come from HARNESS_MEASURES, never from the request.
  const sums = parts.map(
    (p) => `(COALESCE(SUM(metric_value) FILTER (WHERE metric = '${p}'), 0))::${dbl(dialect)} AS p_${p}`,
  );
  return `SELECT ${[...keys, ...sums].join(', ')} FROM (${sessions}) gs JOIN (${points}) mp ON mp.metric_workspace = gs.workspace_id AND mp.metric_session = gs.session_id${keyCols.length > 0 ? ` GROUP BY ${keyCols.join(', ')}` : ''}`;
}

/** One row per key of the parts that the branches set, each branch setting only its own parts. */
function combineSql(
  keys: string[],
  parts: Part[],
  branches: { from: string; keys: string[]; groupBy: string; set: (p: Part) => string | null }[],
  dialect: SqlDialect,
): string {
  const typedNull = `NULL::${dbl(dialect)}`;
  const selects = branches.map(
    (b) =>
      `SELECT ${[...b.keys, ...parts.map((p) => `${b.set(p) ?? typedNull} AS p_${p}`)].join(', ')} FROM ${b.from} ${b.groupBy}`,
  );
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.join(', ')}` : '';
  return `SELECT ${[...keys, ...parts.map((p) => `SUM(p_${p}) AS p_${p}`)].join(', ')} FROM (${selects.join('\nUNION ALL ')}) branches${groupBy}`;
}

interface Shape {
  parts: Part[];
  groups: string[];
  dimCols: string[];
  bucket: string;
  dialect: SqlDialect;
  /** metricSelect's rows (per group and bucket) when the query asks for harness measures. */
  metrics: string | null;
}

/**
 * Per-group totals of a grouped time series (bucket null), from branches summed per group:
 * - additive parts: the sums of the bucket rows;
 * - traces: the sum of the per-bucket counts, corrected for the traces that have rows in more
 *   than one bucket (few: a trace rarely crosses midnight) by subtracting their per-bucket counts
 *   and adding their distinct count, instead of a second exact distinct count over every row;
 * - sessions and users (a user is active on many days): a distinct count per group;
 * - percentiles: the group rows of `pct`;
 * - harness measures: the sums of their bucket rows (`mb`: a point is in one bucket).
 */
function totalsSql(s: Shape): string {
  const only = (part: Part, sql: string) => (p: Part) => (p === part ? sql : null);
  const additive = s.parts.filter((p) => ADDITIVE.has(p) || p === 'traces');
  const distinct = s.parts.filter((p) => DISTINCT.has(p) && p !== 'traces');
  const byGroup = `GROUP BY ${s.dimCols.join(', ')}`;
  const dimSelect = s.dimCols.map((c, i) => `${c} AS ${s.groups[i]}`);
  const crossingRows = 'base WHERE trace_key IN (SELECT trace_key FROM crossing)';
  const groupsBy = `GROUP BY ${s.groups.join(', ')}`;
  return combineSql(
    s.groups,
    s.parts,
    [
      { from: 'gb', keys: s.groups, groupBy: groupsBy, set: (p) => (additive.includes(p) ? `SUM(p_${p})` : null) },
      ...(s.parts.includes('traces')
        ? [
            {
              from: `(SELECT ${dimSelect.join(', ')}, COUNT(DISTINCT trace_key) AS n FROM ${crossingRows} GROUP BY ${s.dimCols.join(', ')}, ${s.bucket}) per_bucket`,
              keys: s.groups,
              groupBy: groupsBy,
              set: only('traces', `-SUM(n)::${dbl(s.dialect)}`),
            },
            {
              from: crossingRows,
              keys: dimSelect,
              groupBy: byGroup,
              set: only('traces', partSql('traces', s.dialect)),
            },
          ]
        : []),
      ...(distinct.length > 0
        ? [
            {
              from: 'base',
              keys: dimSelect,
              groupBy: byGroup,
              set: (p: Part) => (distinct.includes(p) ? partSql(p, s.dialect) : null),
            },
          ]
        : []),
      ...(s.metrics !== null
        ? [
            {
              from: 'mb',
              keys: s.groups,
              groupBy: groupsBy,
              set: (p: Part) => (isMetricPart(p) ? `SUM(p_${p})` : null),
            },
          ]
        : []),
      ...(s.parts.some((p) => QUANTILE[p] !== undefined)
        ? [
            {
              from: 'pct WHERE bucket IS NULL',
              keys: s.groups,
              groupBy: '',
              set: (p: Part) => (QUANTILE[p] !== undefined ? `p_${p}` : null),
            },
          ]
        : []),
    ],
    s.dialect,
  );
}

/**
 * A grouped time series: bucket rows and per-group totals. Percentiles come from one pass over
 * the invocation rows with GROUPING SETS (bucket and total at once); everything else per bucket
 * from `gb`, and the totals from totalsSql.
 */
function groupedSeriesSql(s: Shape, base: string, reuse: string, crossing: string): string {
  const quantiles = s.parts.filter((p) => QUANTILE[p] !== undefined);
  const others = s.parts.filter((p) => QUANTILE[p] === undefined && !isMetricPart(p));
  const keys = [...s.dimCols.map((c, i) => `${c} AS ${s.groups[i]}`), `${s.bucket} AS bucket`];
  const gb = `SELECT ${[...keys, ...others.map((p) => `${partSql(p, s.dialect)} AS p_${p}`)].join(', ')} FROM base GROUP BY ${[...s.dimCols, s.bucket].join(', ')}`;
  const pct = `SELECT ${[...keys, ...quantiles.map((p) => `(${percentileSql(QUANTILE[p] as number, s.dialect, false)})::${dbl(s.dialect)} AS p_${p}`)].join(', ')}
FROM base WHERE ${INVOCATION} GROUP BY GROUPING SETS ((${[...s.dimCols, s.bucket].join(', ')}), (${s.dimCols.join(', ')}))`;
  const bucketKeys = [...s.groups, 'bucket'];
  const bucketRows = combineSql(
    bucketKeys,
    s.parts,
    [
      { from: 'gb', keys: bucketKeys, groupBy: '', set: (p) => (others.includes(p) ? `p_${p}` : null) },
      ...(quantiles.length > 0
        ? [
            {
              from: 'pct WHERE bucket IS NOT NULL',
              keys: bucketKeys,
              groupBy: '',
              set: (p: Part) => (quantiles.includes(p) ? `p_${p}` : null),
            },
          ]
        : []),
      ...(s.metrics !== null
        ? [{ from: 'mb', keys: bucketKeys, groupBy: '', set: (p: Part) => (isMetricPart(p) ? `p_${p}` : null) }]
        : []),
    ],
    s.dialect,
  );
  return `WITH base AS ${reuse} (${base}),
gb AS MATERIALIZED (${gb})${quantiles.length > 0 ? `,\npct AS MATERIALIZED (${pct})` : ''}${s.metrics !== null ? `,\nmb AS MATERIALIZED (${s.metrics})` : ''}${s.parts.includes('traces') ? `,\ncrossing AS MATERIALIZED (${crossing})` : ''}
SELECT ${[...bucketKeys, ...s.parts.map((p) => `p_${p}`)].join(', ')} FROM (${bucketRows}) bucket_rows
UNION ALL SELECT ${[...s.groups, 'NULL AS bucket', ...s.parts.map((p) => `p_${p}`)].join(', ')} FROM (${totalsSql(s)}) totals`;
}

/**
 * The statement for `q` over `source`. With group_by, `top` and `onlyGroups` keep only some groups
 * (stats-ranking.ts); without them the statement is the aggregation alone. `onlyGroups` without
 * `top` narrows the rows before aggregating (a group's values depend on its own rows only); with
 * `top` the groups are ranked among all of them first, then both conditions must hold.
 */
export function compileAggregate(
  q: AggregateQuery,
  source: RowSource,
  dialect: SqlDialect = DUCKDB,
): CompiledAggregate {
  const params: (string | number)[] = [];
  const param: Param = (v) => {
    params.push(v);
    return `$${params.length}`;
  };
  const grouped = q.groupBy.length > 0;
  const top = grouped ? q.top : undefined;
  const only = grouped ? q.onlyGroups : undefined;
  const cols = groupColumns(q, source, param, dialect);
  const narrow =
    only !== undefined && top === undefined ? () => onlyGroupsRowsSql(only, (d) => DIMENSION_COLUMN[d], cols) : null;
  // Ranked measures are computed even when not asked for (they are not returned).
  const ranked = (top ?? [])
    .map((r) => r.by)
    .filter((by): by is Measure => (MEASURES as readonly string[]).includes(by));
  const measures = [...new Set([...q.measures, ...ranked])];
  const parts = [...new Set(measures.flatMap((m) => PARTS[m]))];
  const dimCols = q.groupBy.map((d) => DIMENSION_COLUMN[d]);
  const groups = q.groupBy.map((d) => `"g_${d}"`);
  const outKeys = [...groups, ...(q.bucket !== undefined ? ['bucket'] : [])];
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
  const exactOnly = only !== undefined && (top !== undefined || q.groupBy.length > 1) ? only : undefined;
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
      : `SELECT ${[...new Set([...BASE_COLUMNS, ...dimCols])].join(', ')} FROM (${rows}) source_rows`;
  const metricParts = parts.filter(isMetricPart);
  const bucket = q.bucket === undefined ? null : bucketSql(q.bucket, dialect);
  const metrics =
    metricParts.length === 0 ? null : metricSelect(q, metricParts, dimCols, groups, bucket, param, dialect);
  // A query with harness measures reads the rows twice (their sessions too).
  const reuse = source.rescan ? 'NOT MATERIALIZED' : 'MATERIALIZED';
  let sql: string;
  if (bucket !== null && grouped) {
    // Only `traces` needs the crossing traces; placeholders are made only for SQL that is written.
    const crossing = !parts.includes('traces')
      ? ''
      : (source.crossingTraces?.(q, param) ??
        `SELECT trace_key FROM base GROUP BY trace_key HAVING MIN(${bucket}) <> MAX(${bucket})`);
    const series = groupedSeriesSql({ parts, groups, dimCols, bucket, dialect, metrics }, base, reuse, crossing);
    sql = `SELECT ${[...outKeys, ...finals].join(', ')} FROM (${series}) series`;
  } else {
    // No bucket totals: one GROUP BY (its group rows are what a table ranks), or none, for one row even over no rows.
    const keyCols = [...dimCols, ...(bucket === null ? [] : [bucket])];
    const keys = [
      ...dimCols.map((c, i) => `${c} AS ${groups[i]}`),
      ...(bucket === null ? [] : [`${bucket} AS bucket`]),
    ];
    const groupBy = keyCols.length > 0 ? `GROUP BY ${keyCols.join(', ')}` : '';
    const gb =
      metrics === null
        ? `SELECT ${[...keys, ...parts.map((p) => `${partSql(p, dialect)} AS p_${p}`)].join(', ')} FROM base ${groupBy}`
        : // The span rows make the groups (also those whose spans have no session); the points add to them.
          combineSql(
            outKeys,
            parts,
            [
              { from: 'base', keys, groupBy, set: (p) => (isMetricPart(p) ? null : partSql(p, dialect)) },
              { from: `(${metrics}) mb`, keys: outKeys, groupBy: '', set: (p) => (isMetricPart(p) ? `p_${p}` : null) },
            ],
            dialect,
          );
    sql = `WITH base AS ${metrics === null ? 'NOT MATERIALIZED' : reuse} (${base})\nSELECT ${[...outKeys, ...finals].join(', ')} FROM (${gb}) gb`;
  }
  return sql;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * Result rows of a compiled aggregate (any dialect; numbers may arrive as bigint or text); `decode`
 * turns an encoded group value back into the dimension's value.
 */
export function toAggregateRows(
  rows: Record<string, unknown>[],
  query: AggregateQuery,
  decode?: (dim: Dimension, stored: unknown) => string,
): AggregateRow[] {
  return rows.map((r) => {
    const groups: AggregateRow['groups'] = {};
    for (const d of query.groupBy) {
      const v = r[`g_${d}`];
      groups[d] =
        v === null || v === undefined
          ? null
          : d === 'skill_version'
            ? Number(v)
            : decode !== undefined
              ? decode(d, v)
              : sqlText(v);
    }
    const values: AggregateRow['values'] = {};
    for (const m of query.measures) values[m] = num(r[`m_${m}`]);
    return { groups, bucket: query.bucket === undefined ? null : num(r.bucket), values };
  });
}
