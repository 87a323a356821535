/**
 * Operation 3: groups of the caller's readable tools with their metrics (DESIGN §8).
 * Body `{group_by?, filters?, metrics?, limit?, offset?, workspace_id?}`.
 */
import type { RequestContext } from '../context.ts';
import { pageWindow } from '../shared/paging.ts';
import type { ToolGroupField } from '../store/registry-port.ts';

export const TOOL_GROUP_FIELDS: readonly ToolGroupField[] = [
  'server_id',
  'provider_kind',
  'owner',
  'workspace_id',
  'artifact_status',
  'is_system',
  'source_type',
];
export const TOOL_METRICS = ['count', 'servers', 'latest_updated_at'] as const;
type ToolMetric = (typeof TOOL_METRICS)[number];

export interface ToolAggregateInput {
  group_by?: ToolGroupField[];
  /** Field -> value or any-of list of values. */
  filters?: Partial<Record<ToolGroupField, string | boolean | (string | boolean)[]>>;
  metrics?: ToolMetric[];
  limit?: number;
  offset?: number;
  workspace_id?: string;
}

export interface ToolAggregateResult {
  groups: { key: Record<string, string | boolean | null>; metrics: Record<string, number | string | null> }[];
  page: { limit: number; offset: number; total: number };
}

export async function aggregateTools(ctx: RequestContext, input: ToolAggregateInput): Promise<ToolAggregateResult> {
  const window = pageWindow(input.limit, input.offset, 50, 200);
  const access = await ctx.access();
  const scope = access.scope(input.workspace_id);
  const metrics: readonly ToolMetric[] =
    input.metrics && input.metrics.length > 0 ? [...new Set(input.metrics)] : TOOL_METRICS;
  const filters = Object.entries(input.filters ?? {}).map(([field, value]) => ({
    field: field as ToolGroupField,
    values: Array.isArray(value) ? value : [value],
  }));
  const page = await ctx.registry.aggregateTools({
    workspaceIds: scope,
    groupBy: [...new Set(input.group_by ?? [])],
    filters,
    limit: window.limit,
    offset: window.offset,
  });
  ctx.checkDeadline();
  return {
    groups: page.items.map((g) => ({
      key: g.key,
      metrics: Object.fromEntries(metrics.map((m) => [m, g[m]])),
    })),
    page: { ...window, total: page.total },
  };
}
