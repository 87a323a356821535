/**
 * The three answer shapes of operation 1 (DESIGN §9) built from an engine's aggregate rows: scalar
 * results, a table with one column per query, or one time series per query and group. Groups are
 * ranked in the order every engine uses for `top` (trace-port.ts), so the groups an engine kept are
 * exactly the ones shown. Work is linear in the rows and the answer (bounded by its points).
 */
import {
  HARNESS_MEASURES,
  type AggregateRow,
  type Dimension,
  type GroupRanking,
  type GroupValues,
  type Measure,
} from '../store/trace-port.ts';
import { compareGroups, compareValues } from '../store/group-order.ts';
import { bucketStarts, groupLimitOf, type PanelQuery } from './stats-request.ts';

const UNIT: Record<Measure, string> = {
  sessions: 'count',
  traces: 'count',
  spans: 'count',
  skill_invocations: 'count',
  tool_calls: 'count',
  active_users: 'count',
  tokens: 'tokens',
  cache_read_tokens: 'tokens',
  cache_creation_tokens: 'tokens',
  tokens_per_trace: 'tokens',
  cost: 'usd',
  error_rate: 'ratio',
  success_rate: 'ratio',
  latency_p50: 'ms',
  latency_p90: 'ms',
  latency_p99: 'ms',
  lines_added: 'lines',
  lines_removed: 'lines',
  commits: 'count',
  pull_requests: 'count',
  active_time: 's',
  // The evaluator's own scale (docs/api.md).
  evaluation_score: 'score',
  evaluation_pass_rate: 'ratio',
};
/** Measures that are 0, not null, over no spans. */
const ADDITIVE = new Set<Measure>([
  'sessions',
  'traces',
  'spans',
  'skill_invocations',
  'tool_calls',
  'active_users',
  'tokens',
  'cache_read_tokens',
  'cache_creation_tokens',
  'cost',
  ...HARNESS_MEASURES,
]);

type Value = number | null;
/** Rows of each query, by query name. */
export type QueryRows = Map<string, AggregateRow[]>;

/** The `data` of a statistics answer: one shape per request_type (specification, operation 1). */
export type ScalarData = {
  request_type: 'scalar';
  results: { query_name: string; measure: Measure; value: Value; unit: string | null }[];
};
export type TableData = {
  request_type: 'table';
  columns: { name: string; column_type: 'group' | 'measure'; unit: string | null }[];
  rows: { groups: GroupValues; values: Record<string, Value> }[];
};
export type TimeSeriesData = {
  request_type: 'time_series';
  series: {
    query_name: string;
    measure: Measure;
    unit: string | null;
    groups?: GroupValues;
    points: { timestamp_unix_seconds: number; value: Value }[];
  }[];
};
type StatsData = ScalarData | TableData | TimeSeriesData;

/** The whole answer of operation 1. */
export type StatsAnswer = {
  data: StatsData;
  meta: { warnings: string[] };
  comparison: { start_time_unix_seconds: number; end_time_unix_seconds: number; data: StatsData } | null;
};

const groupKey = (g: GroupValues) => JSON.stringify(g);
const emptyValue = (m: Measure): Value => (ADDITIVE.has(m) ? 0 : null);

/** The ranking of a query's groups: its own measure, `order.direction` (default descending). */
export function seriesRanking(q: PanelQuery): GroupRanking {
  return { by: q.measure, direction: q.order?.direction ?? 'desc', limit: groupLimitOf(q) };
}

/**
 * The ranking of a table's rows, set by its first query's `order`: a query (by name) or a measure
 * ranks by that query's value, a dimension by the group value; `query` is the query whose rows
 * carry the ranked values (absent when ranking by a dimension).
 */
export function tableRanking(queries: PanelQuery[]): { ranking: GroupRanking; query?: PanelQuery } {
  const lead = queries[0] as PanelQuery;
  const by = lead.order?.by ?? lead.name;
  const direction = lead.order?.direction ?? 'desc';
  const limit = groupLimitOf(lead);
  const query = queries.find((q) => q.name === by) ?? queries.find((q) => q.measure === by);
  if (query !== undefined) return { ranking: { by: query.measure, direction, limit }, query };
  return { ranking: { by: by as Dimension, direction, limit } };
}

/** Sorts in the engines' ranking order: the value in `direction`, nulls last, then the groups. */
function rank<T extends { groups: GroupValues }>(
  items: T[],
  value: (t: T) => Value | string,
  direction: 'asc' | 'desc',
  dims: readonly Dimension[],
): T[] {
  const sign = direction === 'desc' ? -1 : 1;
  return items.sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    const byValue = va === null || vb === null ? compareValues(va, vb) : compareValues(va, vb) * sign;
    return byValue || compareGroups(a.groups, b.groups, dims);
  });
}

export function scalarData(queries: PanelQuery[], results: QueryRows): ScalarData {
  return {
    request_type: 'scalar',
    results: queries.map((q) => {
      const row = results.get(q.name)?.find((r) => r.bucket === null);
      const value = row?.values[q.measure] ?? emptyValue(q.measure);
      return { query_name: q.name, measure: q.measure, value, unit: UNIT[q.measure] };
    }),
  };
}

export function tableData(queries: PanelQuery[], results: QueryRows): TableData {
  const dims = queries[0]?.group_by ?? [];
  const rows = new Map<string, { groups: GroupValues; values: Record<string, Value> }>();
  for (const q of queries) {
    for (const r of results.get(q.name) ?? []) {
      const key = groupKey(r.groups);
      let row = rows.get(key);
      if (row === undefined) {
        row = { groups: r.groups, values: Object.fromEntries(queries.map((o) => [o.name, emptyValue(o.measure)])) };
        rows.set(key, row);
      }
      row.values[q.name] = r.values[q.measure] ?? null;
    }
  }
  const { ranking, query } = tableRanking(queries);
  const value = (r: { groups: GroupValues; values: Record<string, Value> }): Value | string =>
    query !== undefined ? (r.values[query.name] ?? null) : (r.groups[ranking.by as Dimension] ?? null);
  return {
    request_type: 'table',
    columns: [
      ...dims.map((d) => ({ name: d, column_type: 'group' as const, unit: null })),
      ...queries.map((q) => ({ name: q.name, column_type: 'measure' as const, unit: UNIT[q.measure] })),
    ],
    rows: rank([...rows.values()], value, ranking.direction, dims).slice(0, ranking.limit),
  };
}

export function timeSeriesData(
  queries: PanelQuery[],
  results: QueryRows,
  startS: number,
  endS: number,
  bucket: 'day' | 'week',
): TimeSeriesData {
  const stamps = bucketStarts(startS, endS, bucket);
  const series = queries.flatMap((q) => {
    const rows = results.get(q.name) ?? [];
    const dims = q.group_by ?? [];
    const empty = emptyValue(q.measure);
    // One pass over the rows: each group's values by bucket, and its total row (bucket null).
    const byGroup = new Map<
      string,
      { groups: GroupValues; total: Value; ranked: boolean; points: Map<number, Value> }
    >();
    for (const r of rows) {
      const key = groupKey(r.groups);
      let g = byGroup.get(key);
      if (g === undefined) {
        g = { groups: r.groups, total: null, ranked: false, points: new Map() };
        byGroup.set(key, g);
      }
      if (r.bucket === null) {
        g.total = r.values[q.measure] ?? null;
        g.ranked = true;
      } else g.points.set(r.bucket, r.values[q.measure] ?? null);
    }
    const ranking = seriesRanking(q);
    // Grouped series rank the groups by their totals; an ungrouped one is the single series.
    const shown =
      dims.length === 0
        ? [byGroup.values().next().value ?? { groups: {}, points: new Map<number, Value>() }]
        : rank(
            [...byGroup.values()].filter((g) => g.ranked),
            (g) => g.total,
            ranking.direction,
            dims,
          ).slice(0, ranking.limit);
    return shown.map((g) => ({
      query_name: q.name,
      measure: q.measure,
      unit: UNIT[q.measure],
      ...(dims.length > 0 ? { groups: g.groups } : {}),
      points: stamps.map((t) => ({
        timestamp_unix_seconds: t,
        value: g.points.has(t) ? (g.points.get(t) as Value) : empty,
      })),
    }));
  });
  return { request_type: 'time_series', series };
}
