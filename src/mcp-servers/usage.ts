/**
 * Usage of MCP servers from telemetry: the tool_call spans whose MCP server (`mcp.server.name`, the
 * `mcp` dimension) is the server's registry id, whatever the tool, over the last 30 days. One
 * trace-store query answers any number of servers of one organization.
 *
 * Whose spans count: the reader's. A caller's usage counts the spans of the workspaces it can read
 * (as the tool aggregate's trace metrics do); an anonymous reader's counts those of the workspaces
 * published for anonymous reading, so nothing of another workspace's telemetry leaks.
 */
import type { RequestContext } from '../context.ts';
import type { TraceStore } from '../store/trace-port.ts';
import { traceStoreFailure } from '../skills/store-errors.ts';

export const USAGE_WINDOW_DAYS = 30;

export interface McpServerUsage {
  window_days: number;
  /** Tool calls to the server in the window. */
  calls: number;
  /** Erroring calls / calls; null without calls. */
  error_rate: number | null;
  /** Nearest-rank 95th percentile of the calls' durations; null without calls. */
  p95_latency_ms: number | null;
}

/** Whose spans count, in one organization. */
export interface UsageScope {
  orgId: string;
  workspaceIds: readonly string[];
}

/** What a usage query needs of a request: the trace store and the deadline's signal. */
export interface UsageReader {
  traces: TraceStore;
  signal: AbortSignal;
}

const DAY_S = 86_400;

/** Usage without calls: one frozen object, shared by every server no span names. */
const NO_CALLS: McpServerUsage = Object.freeze({
  window_days: USAGE_WINDOW_DAYS,
  calls: 0,
  error_rate: null,
  p95_latency_ms: null,
});
const NO_CALLS_JSON = JSON.stringify(NO_CALLS);

/**
 * `usage` as JSON text, as the response schemas serialize it: JSON.stringify writes its members in
 * their order, which is the schemas' (and numbers as fast-json-stringify does).
 */
export function usageJson(u: McpServerUsage): string {
  return u === NO_CALLS ? NO_CALLS_JSON : JSON.stringify(u);
}

/**
 * The usage of each server id (every id given is in the map, without calls when it has none), in one
 * trace-store query. Throws 503 traces_unavailable when the trace store cannot answer, 504
 * request_timeout past the deadline (callers that can answer without usage catch the first).
 */
export async function usageInScope(
  reader: UsageReader,
  scope: UsageScope,
  serverIds: readonly string[],
  nowS = Math.floor(Date.now() / 1000),
): Promise<Map<string, McpServerUsage>> {
  const usage = new Map<string, McpServerUsage>();
  for (const id of serverIds) usage.set(id, NO_CALLS);
  if (usage.size === 0 || scope.workspaceIds.length === 0) return usage;
  const ids = [...usage.keys()];
  const rows = await reader.traces
    .serverUsage(
      {
        orgId: scope.orgId,
        workspaceIds: scope.workspaceIds,
        sinceS: nowS - USAGE_WINDOW_DAYS * DAY_S,
        servers: ids,
      },
      reader.signal,
    )
    .catch((err: unknown) => {
      throw traceStoreFailure(err, reader.signal, 'MCP server usage query');
    });
  for (const r of rows)
    usage.set(r.server, {
      window_days: USAGE_WINDOW_DAYS,
      calls: r.calls,
      error_rate: r.errors / r.calls,
      p95_latency_ms: r.p95LatencyMs,
    });
  return usage;
}

/**
 * The usage of these servers (ids of the caller's organization) over the workspaces the caller can
 * read, for one request: one trace-store query whatever the number of ids.
 */
export async function mcpServerUsage(
  ctx: RequestContext,
  serverIds: readonly string[],
): Promise<Map<string, McpServerUsage>> {
  const access = await ctx.access();
  return usageInScope(ctx, { orgId: ctx.caller.orgId, workspaceIds: access.readableWorkspaceIds }, serverIds);
}
