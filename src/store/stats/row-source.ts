/**
 * What the statistics compiler asks of an engine: its rows of a query's skill (`RowSource`) under
 * the column names of SOURCE_COLUMNS, optionally the codes it stores instead of values and the
 * summed form of a query from its rollups (`SummedShape`). The engines' skill-rows.ts implement it.
 */
import { SPAN_DIMENSIONS, type AggregateQuery, type Dimension, type SpanDimension } from '../trace-port.ts';
import type { Param, SqlDialect } from './dialect.ts';
import type { SummedPart } from './measures.ts';
import { SPAN_DIMENSION_COLUMNS, SPAN_LATER_COLUMNS, SPAN_MEASURE_COLUMNS } from './span-columns.ts';

/** Whether a dimension is one of spans (not `evaluation`, which only evaluations have). */
export const isSpanDimension = (d: Dimension): d is SpanDimension => (SPAN_DIMENSIONS as readonly string[]).includes(d);

/** The span (and rollup) column of each span dimension. */
export const DIMENSION_COLUMN: Record<SpanDimension, string> = {
  harness: 'harness',
  skill: 'skill',
  skill_version: 'skill_version',
  command: 'command',
  mcp: 'mcp',
  tool: 'tool',
  model: 'model',
  user: 'user_id',
  provider: 'provider',
  agent: 'agent',
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
  ...SPAN_LATER_COLUMNS,
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
export const BASE_COLUMNS = [
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

/**
 * The mappings a caller may follow: those written by a span of a workspace in the query's scope.
 * A trace belongs to an agent for a caller only through a span the caller may read, so a span in
 * another workspace can neither pull the caller's traces into an agent nor tell that it named one.
 */
export function mappingScope(q: AggregateQuery, param: Param, column: string): string {
  return q.workspaceIds.length === 0 ? 'FALSE' : `${column} IN (${q.workspaceIds.map((w) => param(w)).join(', ')})`;
}

/** An engine's integer codes for a dimension's values (DuckDB's dictionary). */
export interface DimensionCodes {
  /** The code of a value (filters and group lists bind it); a value no span has gets a code no span has. */
  encode(value: string | number): number;
  /** SQL of the text a column of codes stands for: rankings break ties by it, not by the code. */
  sortKey(column: string): string;
}
