/**
 * Operation 1, trace statistics of a skill (DESIGN §9): resolves the skill (404/403 as any
 * resource), checks the request, runs one aggregation per distinct (filters, group_by) of its
 * queries, and shapes the scalar, table or time_series envelope, with `comparison` for
 * `compare: previous_period`. Transport-free: REST and GraphQL both call queryTraceStats.
 */
import type { RequestContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import {
  QueryCancelledError, TraceStoreUnavailableError, bucketStart, type AggregateRow, type Dimension, type Measure, type SpanFilter, type TraceStore,
} from '../store/trace-port.ts';
import { DEFAULT_GROUP_LIMIT, MAX_GROUP_LIMIT, checkRules, type PanelQuery, type TraceStatsRequest } from '../traces/stats-request.ts';

export const UNIT: Record<Measure, string> = {
  sessions: 'count', traces: 'count', spans: 'count', skill_invocations: 'count', tool_calls: 'count',
  active_users: 'count', tokens: 'tokens', tokens_per_trace: 'tokens', cost: 'usd', error_rate: 'ratio',
  success_rate: 'ratio', latency_p50: 'ms', latency_p90: 'ms', latency_p99: 'ms',
};
/** Measures that are 0, not null, over no spans. */
const ADDITIVE = new Set<Measure>(['sessions', 'traces', 'spans', 'skill_invocations', 'tool_calls', 'active_users', 'tokens', 'cost']);

type Value = number | null;
type Groups = Partial<Record<Dimension, string | number | null>>;

interface Window {
  startS: number;
  endS: number;
}

interface Scope {
  orgId: string;
  skill: string;
  skillVersion?: number;
  workspaceIds: readonly string[];
  bucket?: 'day' | 'week';
}

function filtersOf(q: PanelQuery): SpanFilter[] {
  return (q.filters ?? []).map((f) => {
    const raw = f.value === undefined ? [] : Array.isArray(f.value) ? f.value : [f.value];
    return { key: f.key, op: f.op, values: raw.map((v) => (f.key === 'skill_version' ? Number(v) : String(v))) };
  });
}

/** One aggregation per distinct (filters, group_by); each panel query reads its measure from it. */
async function run(store: TraceStore, scope: Scope, win: Window, queries: PanelQuery[], signal: AbortSignal): Promise<Map<string, AggregateRow[]>> {
  const batches = new Map<string, PanelQuery[]>();
  for (const q of queries) {
    const key = JSON.stringify([q.filters ?? [], q.group_by ?? []]);
    batches.set(key, [...(batches.get(key) ?? []), q]);
  }
  const out = new Map<string, AggregateRow[]>();
  await Promise.all([...batches.values()].map(async (batch) => {
    const first = batch[0] as PanelQuery;
    const rows = await store.aggregate({
      orgId: scope.orgId, skill: scope.skill, ...(scope.skillVersion !== undefined ? { skillVersion: scope.skillVersion } : {}),
      startS: win.startS, endS: win.endS, workspaceIds: scope.workspaceIds, filters: filtersOf(first),
      groupBy: first.group_by ?? [], measures: batch.map((q) => q.measure),
      ...(scope.bucket !== undefined ? { bucket: scope.bucket } : {}),
    }, signal);
    for (const q of batch) out.set(q.name, rows);
  }));
  return out;
}

const groupKey = (g: Groups) => JSON.stringify(g);

function compare(a: Value | string, b: Value | string, desc: boolean): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return (a < b ? -1 : 1) * (desc ? -1 : 1);
}

function limitOf(q: PanelQuery, warnings: string[]): number {
  const limit = q.limit ?? DEFAULT_GROUP_LIMIT;
  if (limit > MAX_GROUP_LIMIT) warnings.push(`queries ${q.name}: limit clamped to ${MAX_GROUP_LIMIT}`);
  return Math.min(limit, MAX_GROUP_LIMIT);
}

function scalarData(queries: PanelQuery[], results: Map<string, AggregateRow[]>) {
  return {
    request_type: 'scalar',
    results: queries.map((q) => {
      const row = results.get(q.name)?.find((r) => r.bucket === null);
      const value = row?.values[q.measure] ?? (ADDITIVE.has(q.measure) ? 0 : null);
      return { query_name: q.name, measure: q.measure, value, unit: UNIT[q.measure] };
    }),
  };
}

function tableData(queries: PanelQuery[], results: Map<string, AggregateRow[]>, warnings: string[]) {
  const dims = queries[0]?.group_by ?? [];
  const rows = new Map<string, { groups: Groups; values: Record<string, Value> }>();
  for (const q of queries) {
    for (const r of results.get(q.name) ?? []) {
      const key = groupKey(r.groups);
      const row = rows.get(key) ?? { groups: r.groups, values: Object.fromEntries(queries.map((o) => [o.name, ADDITIVE.has(o.measure) ? 0 : null])) };
      row.values[q.name] = r.values[q.measure] ?? null;
      rows.set(key, row);
    }
  }
  const lead = queries[0] as PanelQuery;
  const by = lead.order?.by ?? lead.name;
  const desc = (lead.order?.direction ?? 'desc') === 'desc';
  const byQuery = queries.find((q) => q.name === by) ?? queries.find((q) => q.measure === by);
  const sortValue = (r: { groups: Groups; values: Record<string, Value> }): Value | string =>
    byQuery !== undefined ? (r.values[byQuery.name] ?? null) : ((r.groups[by as Dimension] ?? null) as Value | string);
  const sorted = [...rows.values()].sort((a, b) => compare(sortValue(a), sortValue(b), desc) || groupKey(a.groups).localeCompare(groupKey(b.groups)));
  return {
    request_type: 'table',
    columns: [
      ...dims.map((d) => ({ name: d, column_type: 'group', unit: null })),
      ...queries.map((q) => ({ name: q.name, column_type: 'measure', unit: UNIT[q.measure] })),
    ],
    rows: sorted.slice(0, limitOf(lead, warnings)),
  };
}

function timeSeriesData(queries: PanelQuery[], results: Map<string, AggregateRow[]>, win: Window, bucket: 'day' | 'week', warnings: string[]) {
  const step = bucket === 'day' ? 86400 : 7 * 86400;
  const stamps: number[] = [];
  for (let t = bucketStart(win.startS, bucket); t < win.endS; t += step) stamps.push(t);
  const series = queries.flatMap((q) => {
    const rows = results.get(q.name) ?? [];
    const grouped = (q.group_by ?? []).length > 0;
    const empty = ADDITIVE.has(q.measure) ? 0 : null;
    const totals = rows.filter((r) => r.bucket === null);
    // Groups rank by their total of the series' own measure over the whole range.
    const desc = (q.order?.direction ?? 'desc') === 'desc';
    const top = grouped
      ? [...totals].sort((a, b) => compare(a.values[q.measure] ?? null, b.values[q.measure] ?? null, desc) || groupKey(a.groups).localeCompare(groupKey(b.groups))).slice(0, limitOf(q, warnings))
      : [{ groups: {}, bucket: null, values: {} } as AggregateRow];
    return top.map((g) => {
      const byBucket = new Map(rows.filter((r) => r.bucket !== null && groupKey(r.groups) === groupKey(g.groups)).map((r) => [r.bucket, r.values[q.measure] ?? null]));
      const points = stamps.map((t) => ({ timestamp_unix_seconds: t, value: byBucket.has(t) ? (byBucket.get(t) as Value) : empty }));
      return { query_name: q.name, measure: q.measure, unit: UNIT[q.measure], ...(grouped ? { groups: g.groups } : {}), points };
    });
  });
  return { request_type: 'time_series', series };
}

async function compute(req: TraceStatsRequest, store: TraceStore, scope: Scope, win: Window, signal: AbortSignal, warnings: string[]) {
  const results = await run(store, scope, win, req.queries, signal);
  if (req.request_type === 'scalar') return scalarData(req.queries, results);
  if (req.request_type === 'table') return tableData(req.queries, results, warnings);
  return timeSeriesData(req.queries, results, win, scope.bucket as 'day' | 'week', warnings);
}

export async function queryTraceStats(
  ctx: RequestContext,
  store: TraceStore,
  skillId: string,
  versionOrdinal: number | undefined,
  req: TraceStatsRequest,
) {
  const [skill] = await ctx.registry.getArtifacts([skillId]);
  if (skill === undefined || skill.kind !== 'skill') throw new ApiError('not_found', `skill ${skillId} not found`);
  const access = await ctx.access();
  access.assertReadable(skill.workspace_id, 'skill', skillId);
  checkRules(req);
  const warnings: string[] = [];
  const workspaceIds = req.workspace_id == null ? access.readableWorkspaceIds : (access.assertReadable(req.workspace_id), [req.workspace_id]);
  const win = { startS: req.start_time_unix_seconds, endS: req.end_time_unix_seconds };
  const bucket = req.request_type === 'time_series' ? (req.bucket ?? (win.endS - win.startS <= 92 * 86400 ? 'day' : 'week')) : undefined;
  if (req.request_type !== 'time_series' && req.bucket != null) warnings.push('bucket applies to time_series requests only and was ignored');
  const scope: Scope = {
    orgId: ctx.caller.orgId, skill: skillId, workspaceIds,
    ...(versionOrdinal !== undefined ? { skillVersion: versionOrdinal } : {}), ...(bucket !== undefined ? { bucket } : {}),
  };
  try {
    const previous = { startS: win.startS - (win.endS - win.startS), endS: win.startS };
    const [data, comparison] = await Promise.all([
      compute(req, store, scope, win, ctx.signal, warnings),
      req.compare === 'previous_period' ? compute(req, store, scope, previous, ctx.signal, warnings) : Promise.resolve(null),
    ]);
    return {
      data,
      meta: { warnings: [...new Set(warnings)] },
      comparison: comparison === null ? null : { start_time_unix_seconds: previous.startS, end_time_unix_seconds: previous.endS, data: comparison },
    };
  } catch (err) {
    if (err instanceof QueryCancelledError || ctx.signal.aborted) throw new ApiError('request_timeout', 'the statistics query ran past the request deadline');
    if (err instanceof ApiError) throw err;
    if (err instanceof TraceStoreUnavailableError) throw new ApiError('traces_unavailable', 'the trace store is unavailable; the rest of the service is up');
    throw new ApiError('traces_unavailable', 'the trace store could not answer');
  }
}
