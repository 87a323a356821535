/** Translates the toolAggregate arguments into the handler input of REST operation 3. */
import type { QueryToolAggregateArgs } from '../../generated/graphql.ts';
import type { Window } from '../../shared/paging.ts';
import type { ToolAggregateInput } from '../../tools/aggregate-tools.ts';

const FILTER_FIELDS = {
  serverId: 'server_id',
  providerKind: 'provider_kind',
  owner: 'owner',
  workspaceId: 'workspace_id',
  artifactStatus: 'artifact_status',
  isSystem: 'is_system',
  sourceType: 'source_type',
} as const;

/** Filters renamed to the REST field names; the window from `first`/`after`. */
export function aggregateInput(args: QueryToolAggregateArgs, window: Window): ToolAggregateInput {
  const filters: NonNullable<ToolAggregateInput['filters']> = {};
  for (const [name, field] of Object.entries(FILTER_FIELDS)) {
    const value = args.filters?.[name as keyof typeof FILTER_FIELDS];
    if (value !== null && value !== undefined) filters[field] = value;
  }
  return {
    ...(args.groupBy != null ? { group_by: args.groupBy } : {}),
    filters,
    limit: window.limit,
    offset: window.offset,
    ...(args.workspaceId != null ? { workspace_id: args.workspaceId } : {}),
  };
}
