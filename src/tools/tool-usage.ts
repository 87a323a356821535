/**
 * Trace metrics of tool groups (DESIGN §8, operation 3): a tool_call span counts for a group when
 * its tool name (`gen_ai.tool.name`) is the `tool_name` (else the `name`) of a tool of the group and
 * its MCP server (`mcp.server.name`) is that tool's `server_id` (both absent also match), once per
 * group, among the spans of the request's scope (the caller's readable workspaces, or the asked
 * subtree). Bounded before work (DESIGN §12): at most MAX_TOOL_REFS distinct tools are looked up.
 */
import type { RequestContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import type { ToolAggregateQuery, ToolGroup } from '../store/registry-port.ts';
import type { ToolUsageEntry, ToolUsageQuery } from '../store/trace-port.ts';
import { rangeWork } from '../skills/stats-request.ts';
import { traceStoreFailure } from '../skills/store-errors.ts';

export const TRACE_METRICS = ['calls', 'error_rate', 'p95_latency_ms', 'last_called_at'] as const;
export type TraceMetric = (typeof TRACE_METRICS)[number];
export interface TraceMetricValues {
  calls: number;
  error_rate: number | null;
  p95_latency_ms: number | null;
  last_called_at: string | null;
}

/** Distinct (group key, tool, server) entries one aggregate may look up in the trace store. */
const MAX_TOOL_REFS = 10_000;

/**
 * What a week of one usage window weighs in statistics units (a week of one aggregation): a window
 * reads every tool call of the caller's scope, an aggregation one skill's traces. At this weight a
 * budget of usage costs the trace engine less than a budget of statistics (bench/abuse-usage.ts,
 * docs/architecture.md), so it errs on the side of refusing.
 */
const USAGE_WINDOW_WEIGHT = 4;

const NO_CALLS: TraceMetricValues = { calls: 0, error_rate: null, p95_latency_ms: null, last_called_at: null };

/** The trace metrics of each group of the page, in page order. */
export async function toolUsageOfGroups(
  ctx: RequestContext,
  query: ToolAggregateQuery,
  groups: readonly ToolGroup[],
  sinceS: number | null,
): Promise<TraceMetricValues[]> {
  if (groups.length === 0) return [];
  const refs = await ctx.registry.toolRefs({ ...query, offset: 0, limit: MAX_TOOL_REFS + 1 });
  if (refs.length > MAX_TOOL_REFS)
    throw new ApiError(
      'invalid_field',
      `trace metrics look up at most ${MAX_TOOL_REFS.toLocaleString('en-US')} distinct tools: narrow the aggregate with filters or workspace_id`,
      { field: '/metrics' },
    );
  const groupOf = new Map(groups.map((g, i) => [JSON.stringify(g.key), i]));
  const tools = refs.flatMap((r) => {
    const group = groupOf.get(JSON.stringify(r.key));
    return group === undefined ? [] : [{ group, tool: r.tool, server: r.server }];
  });
  ctx.checkDeadline();
  return usageOf(ctx, groups.length, { orgId: ctx.caller.orgId, workspaceIds: query.workspaceIds, sinceS, tools });
}

/** One `Tool.usage(since:)`: a tool (latest version the caller can read) and its window. */
export interface UsageLookup {
  tool: ArtifactVersion;
  /** Calls starting at or after this time; null: every stored call. */
  sinceS: number | null;
}

/**
 * The trace metrics of each lookup, in the caller's readable workspaces, in one trace-store query
 * whatever their windows. Lookups of the same tool name, server and window share one entry.
 */
export async function toolUsageOfTools(
  ctx: RequestContext,
  lookups: readonly UsageLookup[],
): Promise<TraceMetricValues[]> {
  const access = await ctx.access();
  const groupOf = new Map<string, number>();
  const tools: ToolUsageEntry[] = [];
  const groups = lookups.map((l) => {
    const tool = toolNameOf(l.tool);
    const server = l.tool.server_id ?? null;
    const key = JSON.stringify([tool, server, l.sinceS]);
    let group = groupOf.get(key);
    if (group === undefined) {
      group = tools.length;
      groupOf.set(key, group);
      tools.push({ group, tool, server, sinceS: l.sinceS });
    }
    return group;
  });
  const usage = await usageOf(ctx, tools.length, {
    orgId: ctx.caller.orgId,
    workspaceIds: access.readableWorkspaceIds,
    sinceS: null,
    tools,
  });
  return groups.map((g) => usage[g] ?? NO_CALLS);
}

/**
 * What a usage window costs the trace engine, in the statistics' work units (skills/stats-request.ts
 * `statsWork`): one pass over the organization's tool calls from `sinceS` to now, weighted by
 * USAGE_WINDOW_WEIGHT, × (whole weeks + 1); no window (every stored call) or one older than 366
 * days costs the 366 days the statistics' longest range costs. Lookups of one window share their
 * pass, so an operation's usage costs this once per distinct window, however many tools ask.
 */
export function usageWindowWork(sinceS: number | null, nowS: number): number {
  return USAGE_WINDOW_WEIGHT * rangeWork(sinceS === null ? Infinity : nowS - sinceS);
}

/** The name telemetry gives a tool: its `tool_name`, else its artifact name. */
export function toolNameOf(t: ArtifactVersion): string {
  const name = t.doc.tool_name;
  return typeof name === 'string' ? name : t.name;
}

async function usageOf(ctx: RequestContext, groups: number, query: ToolUsageQuery): Promise<TraceMetricValues[]> {
  const rows = await ctx.traces.toolUsage(query, ctx.signal).catch((err: unknown) => {
    throw traceStoreFailure(err, ctx.signal, 'tool usage query');
  });
  const out = Array.from({ length: groups }, () => NO_CALLS);
  for (const r of rows) {
    out[r.group] = {
      calls: r.calls,
      error_rate: r.errors / r.calls,
      p95_latency_ms: r.p95LatencyMs,
      last_called_at: new Date(r.lastCalledS * 1000).toISOString(),
    };
  }
  return out;
}
