/**
 * Operation 3: groups of the caller's readable tools with their metrics (DESIGN §8).
 * Body `{group_by?, filters?, metrics?, since_unix_seconds?, limit?, offset?, workspace_id?}`.
 * Registry metrics come from the tool rows; trace metrics (`calls`, `error_rate`,
 * `p95_latency_ms`, `last_called_at`) from the tool_call spans of the same scope whose tool name
 * and MCP server are those of a tool in the group (tool-usage.ts).
 */
import type { RequestContext } from '../context.ts';
import { pageWindow } from '../shared/paging.ts';
import type { ToolAggregateQuery, ToolGroupField } from '../store/registry-port.ts';
import { TRACE_METRICS, toolUsageOfGroups, type TraceMetric } from './tool-usage.ts';

export const TOOL_GROUP_FIELDS: readonly ToolGroupField[] = [
  'server_id',
  'provider_kind',
  'owner',
  'workspace_id',
  'artifact_status',
  'is_system',
  'source_type',
];
const REGISTRY_METRICS = ['count', 'servers', 'latest_updated_at'] as const;
export const TOOL_METRICS = [...REGISTRY_METRICS, ...TRACE_METRICS] as const;
type ToolMetric = (typeof TOOL_METRICS)[number];

export interface ToolAggregateInput {
  group_by?: ToolGroupField[];
  /** Field -> value or any-of list of values. */
  filters?: Partial<Record<ToolGroupField, string | boolean | (string | boolean)[]>>;
  metrics?: ToolMetric[];
  /** Trace metrics count calls starting at or after this time (default: every stored call). */
  since_unix_seconds?: number;
  limit?: number;
  offset?: number;
  workspace_id?: string;
}

export interface ToolAggregateResult {
  groups: { key: Record<string, string | boolean | null>; metrics: Record<string, number | string | null> }[];
  page: { limit: number; offset: number; total: number };
}

const isTraceMetric = (m: string): m is TraceMetric => (TRACE_METRICS as readonly string[]).includes(m);

/** True when the request asks for a metric read from the trace store (its answer is not cacheable). */
export function asksTraceMetrics(input: ToolAggregateInput | undefined): boolean {
  return (input?.metrics ?? []).some(isTraceMetric);
}

export async function aggregateTools(ctx: RequestContext, input: ToolAggregateInput): Promise<ToolAggregateResult> {
  const window = pageWindow(input.limit, input.offset, 50, 200);
  const access = await ctx.access();
  const scope = access.scope(input.workspace_id);
  // Without `metrics`, the registry's: the default answer never depends on the trace store.
  const metrics: readonly ToolMetric[] =
    input.metrics && input.metrics.length > 0 ? [...new Set(input.metrics)] : REGISTRY_METRICS;
  const filters = Object.entries(input.filters ?? {}).map(([field, value]) => ({
    field: field as ToolGroupField,
    values: Array.isArray(value) ? value : [value],
  }));
  const query: ToolAggregateQuery = {
    workspaceIds: scope,
    groupBy: [...new Set(input.group_by ?? [])],
    filters,
    limit: window.limit,
    offset: window.offset,
  };
  const page = await ctx.registry.aggregateTools(query);
  ctx.checkDeadline();
  const usage = metrics.some(isTraceMetric)
    ? await toolUsageOfGroups(ctx, query, page.items, input.since_unix_seconds ?? null)
    : null;
  return {
    groups: page.items.map((g, i) => {
      const traced = usage?.[i];
      return {
        key: g.key,
        metrics: Object.fromEntries(metrics.map((m) => [m, isTraceMetric(m) ? (traced?.[m] ?? null) : g[m]])),
      };
    }),
    page: { ...window, total: page.total },
  };
}
