/**
 * Operation 1, trace statistics of a skill (DESIGN §9): resolves the skill (404/403 as any
 * resource), checks the request and the size of its answer before the store is asked (DESIGN §12),
 * runs one aggregation per distinct (filters, group_by) of its queries with the groups it can show
 * ranked in the engine, and shapes the scalar, table or time_series envelope, with `comparison` for
 * `compare: previous_period`. Transport-free: REST and GraphQL both call queryTraceStats. The same
 * statistics of an agent's traces (agents/trace-stats.ts) share everything after the resolution
 * ({@link subjectTraceStats}).
 */
import type { RequestContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import {
  type AggregateQuery,
  type GroupRanking,
  type GroupValues,
  type SpanFilter,
  type StatsSubject,
  type TraceStore,
} from '../store/trace-port.ts';
import {
  MAX_GROUP_LIMIT,
  bucketOf,
  checkAnswerSize,
  checkRules,
  type PanelQuery,
  type TraceStatsRequest,
} from './stats-request.ts';
import { traceStoreFailure } from './store-errors.ts';
import {
  scalarData,
  seriesRanking,
  tableData,
  tableRanking,
  timeSeriesData,
  type QueryRows,
  type StatsAnswer,
} from './stats-shapes.ts';

interface Window {
  startS: number;
  endS: number;
}

interface Scope {
  orgId: string;
  subject: StatsSubject;
  workspaceIds: readonly string[];
  bucket?: 'day' | 'week';
}

function filtersOf(q: PanelQuery): SpanFilter[] {
  return (q.filters ?? []).map((f) => {
    const raw = f.value === undefined ? [] : Array.isArray(f.value) ? f.value : [f.value];
    return { key: f.key, op: f.op, values: raw.map((v) => (f.key === 'skill_version' ? Number(v) : String(v))) };
  });
}

/** Queries that share filters and group_by: one aggregation answers them all. */
function batchesOf(queries: PanelQuery[]): PanelQuery[][] {
  const batches = new Map<string, PanelQuery[]>();
  for (const q of queries) {
    const key = JSON.stringify([q.filters ?? [], q.group_by ?? []]);
    batches.set(key, [...(batches.get(key) ?? []), q]);
  }
  return [...batches.values()];
}

const distinct = <T>(items: T[]): T[] => [...new Map(items.map((i) => [JSON.stringify(i), i])).values()];

class Aggregation {
  readonly rows: QueryRows = new Map();
  private readonly store: TraceStore;
  private readonly scope: Scope;
  private readonly win: Window;
  private readonly signal: AbortSignal;

  constructor(store: TraceStore, scope: Scope, win: Window, signal: AbortSignal) {
    this.store = store;
    this.scope = scope;
    this.win = win;
    this.signal = signal;
  }

  /** Aggregates one batch; its rows answer each of its queries. */
  async run(batch: PanelQuery[], keep: { top?: GroupRanking[]; onlyGroups?: GroupValues[] } = {}): Promise<void> {
    const first = batch[0] as PanelQuery;
    const { scope, win } = this;
    const query: AggregateQuery = {
      orgId: scope.orgId,
      subject: scope.subject,
      startS: win.startS,
      endS: win.endS,
      workspaceIds: scope.workspaceIds,
      filters: filtersOf(first),
      groupBy: first.group_by ?? [],
      measures: batch.map((q) => q.measure),
      ...(scope.bucket !== undefined ? { bucket: scope.bucket } : {}),
      ...keep,
    };
    const rows = keep.onlyGroups?.length === 0 ? [] : await this.store.aggregate(query, this.signal);
    for (const q of batch) this.rows.set(q.name, rows);
  }
}

/**
 * Every aggregation of a request over one window. Engines keep only the groups the answer can
 * show: a time series the top groups of each query; a table the top rows of its ranking, after
 * which the other queries are asked for exactly those rows.
 */
async function aggregateAll(req: TraceStatsRequest, agg: Aggregation): Promise<QueryRows> {
  const batches = batchesOf(req.queries);
  const grouped = (req.queries[0]?.group_by ?? []).length > 0;
  if (req.request_type === 'table' && grouped) {
    const { ranking, query } = tableRanking(req.queries);
    const leader = batches.find((b) => b.includes(query ?? (req.queries[0] as PanelQuery))) as PanelQuery[];
    await agg.run(leader, { top: [ranking] });
    const shown = distinct((agg.rows.get((leader[0] as PanelQuery).name) ?? []).map((r) => r.groups));
    await Promise.all(batches.filter((b) => b !== leader).map((b) => agg.run(b, { onlyGroups: shown })));
  } else {
    await Promise.all(
      batches.map((b) => {
        const rankings = (b[0]?.group_by ?? []).length > 0 ? distinct(b.map(seriesRanking)) : [];
        return agg.run(b, rankings.length > 0 ? { top: rankings } : {});
      }),
    );
  }
  return agg.rows;
}

async function compute(ctx: RequestContext, req: TraceStatsRequest, store: TraceStore, scope: Scope, win: Window) {
  const results = await aggregateAll(req, new Aggregation(store, scope, win, ctx.signal));
  ctx.checkDeadline();
  if (req.request_type === 'scalar') return scalarData(req.queries, results);
  if (req.request_type === 'table') return tableData(req.queries, results);
  return timeSeriesData(req.queries, results, win.startS, win.endS, scope.bucket as 'day' | 'week');
}

/** Warnings of a request the answer follows only in part. */
function warningsOf(req: TraceStatsRequest, maxGroupLimit: number): string[] {
  const warnings: string[] = [];
  const limited = req.request_type === 'table' ? req.queries.slice(0, 1) : req.queries;
  for (const q of limited)
    if ((q.group_by ?? []).length > 0 && (q.limit ?? 0) > maxGroupLimit)
      warnings.push(`queries ${q.name}: limit clamped to ${maxGroupLimit}`);
  if (req.request_type !== 'time_series' && req.bucket != null)
    warnings.push('bucket applies to time_series requests only and was ignored');
  return warnings;
}

/**
 * Operation 1. `admit`, when given, sees the request once it is known good (skill readable, rules
 * and answer size checked) and before any aggregation: a transport's own budget may refuse it.
 */
export async function queryTraceStats(
  ctx: RequestContext,
  skillId: string,
  versionOrdinal: number | undefined,
  req: TraceStatsRequest,
  admit?: (req: TraceStatsRequest) => void,
): Promise<StatsAnswer> {
  const [skill] = await ctx.registry.getArtifacts([skillId]);
  if (skill === undefined || skill.kind !== 'skill') throw new ApiError('not_found', `skill ${skillId} not found`);
  (await ctx.access()).assertReadable(skill.workspace_id, 'skill', skillId);
  const subject = { skill: skillId, ...(versionOrdinal !== undefined ? { skillVersion: versionOrdinal } : {}) };
  return subjectTraceStats(ctx, subject, req, admit);
}

/**
 * The statistics of a subject the caller may read (the caller resolved it): the request's rules
 * and answer size checked, `admit` asked, then the spans of the subject's traces in the caller's
 * readable workspaces (or the request's `workspace_id`, 404/403 as any workspace) aggregated.
 */
export async function subjectTraceStats(
  ctx: RequestContext,
  subject: StatsSubject,
  req: TraceStatsRequest,
  admit?: (req: TraceStatsRequest) => void,
): Promise<StatsAnswer> {
  const access = await ctx.access();
  checkRules(req);
  checkAnswerSize(req, ctx.services.config.bounds.statsMaxPoints);
  admit?.(req);
  const workspaceIds =
    req.workspace_id == null
      ? access.readableWorkspaceIds
      : (access.assertReadable(req.workspace_id), [req.workspace_id]);
  const win = { startS: req.start_time_unix_seconds, endS: req.end_time_unix_seconds };
  const scope: Scope = {
    orgId: ctx.caller.orgId,
    subject,
    workspaceIds,
    ...(req.request_type === 'time_series' ? { bucket: bucketOf(req) } : {}),
  };
  try {
    const previous = { startS: win.startS - (win.endS - win.startS), endS: win.startS };
    const [data, comparison] = await Promise.all([
      compute(ctx, req, ctx.traces, scope, win),
      req.compare === 'previous_period' ? compute(ctx, req, ctx.traces, scope, previous) : Promise.resolve(null),
    ]);
    ctx.checkDeadline();
    return {
      data,
      meta: { warnings: warningsOf(req, MAX_GROUP_LIMIT) },
      comparison:
        comparison === null
          ? null
          : { start_time_unix_seconds: previous.startS, end_time_unix_seconds: previous.endS, data: comparison },
    };
  } catch (err) {
    throw traceStoreFailure(err, ctx.signal, 'statistics query');
  }
}
