/**
 * Root lists: the same handlers as REST operations 2, 3, 6 and 7 and the MCP server list
 * (validation, authorization, paging), shaped as Relay connections. Found rows prime the loaders
 * (artifacts, MCP servers) for nested fields.
 */
import { findAgents, searchCursor, type AgentSearchInput } from '../../agents/search-agents.ts';
import type { QueryResolvers } from '../../generated/graphql.ts';
import { findUsers, userListCursor } from '../../org/list-users.ts';
import { encodeCursor, fingerprint } from '../../shared/paging.ts';
import { rateLimitedError, type LimitedOperation } from '../../rate-limits.ts';
import type { RequestContext } from '../../context.ts';
import { aggregateTools } from '../../tools/aggregate-tools.ts';
import { findTools } from '../../tools/list-tools.ts';
import { findMcpServers } from '../../mcp-servers/find-servers.ts';
import { checkFirst, decodeKeyset, keysetConnection, toConnection, windowOf } from '../connection.ts';
import { settleArtifactNodes } from '../settle-nodes.ts';
import { aggregateInput } from './tool-aggregate-input.ts';

/** Fields that run a rate-limited operation spend the caller's quota of that operation, as REST does. */
async function spendQuota(ctx: RequestContext, operation: LimitedOperation): Promise<void> {
  const quota = await ctx.spendQuota(operation);
  if (quota.exceeded) throw rateLimitedError(quota);
}

/** List fields of `Query`, as connections. */
export const queryLists: QueryResolvers = {
  agentSearch: async (_root, args, ctx, info) => {
    const input: AgentSearchInput = {
      ...(args.query != null ? { query: args.query } : {}),
      ...(args.strategy != null ? { strategy: args.strategy } : {}),
      ...(args.sorts != null
        ? { sorts: args.sorts.map((s) => ({ field: s.field, direction: s.direction ?? 'asc' })) }
        : {}),
      ...(args.workspaceId != null ? { workspace_id: args.workspaceId } : {}),
    };
    const limit = checkFirst(args.first);
    const { rows, page } = await findAgents(ctx, {
      ...input,
      ...(limit !== undefined ? { limit } : {}),
      ...(args.after != null ? { cursor: args.after } : {}),
    });
    for (const row of rows) ctx.loaders.artifact.prime(row.id, row);
    await settleArtifactNodes(ctx, info, rows);
    return toConnection(rows, page.offset, page.total, (p) => searchCursor(input, p));
  },

  tools: async (_root, args, ctx, info) => {
    await spendQuota(ctx, 'tools.list');
    const window = windowOf('tools', args.first, args.after);
    const { rows, page } = await findTools(ctx, window.limit, window.offset);
    for (const row of rows) ctx.loaders.artifact.prime(row.id, row);
    await settleArtifactNodes(ctx, info, rows);
    return toConnection(rows, page.offset, page.total, (p) => encodeCursor(p, 'tools'));
  },

  toolAggregate: async (_root, args, ctx) => {
    await spendQuota(ctx, 'tools.aggregate');
    const list = `tool-aggregate:${fingerprint([args.groupBy, args.filters, args.workspaceId])}`;
    const window = windowOf(list, args.first, args.after);
    const result = await aggregateTools(ctx, aggregateInput(args, window));
    const groups = result.groups.map((g) => ({
      key: g.key,
      count: g.metrics.count as number,
      servers: g.metrics.servers as number,
      latest_updated_at: g.metrics.latest_updated_at as string | null,
    }));
    return toConnection(groups, result.page.offset, result.page.total, (p) => encodeCursor(p, list));
  },

  mcpServers: async (_root, args, ctx) => {
    await spendQuota(ctx, 'mcp_registry.read');
    const search = args.search ?? '';
    const list = `mcp-servers:${fingerprint([search])}`;
    const limit = checkFirst(args.first);
    const { rows, hasMore } = await findMcpServers(ctx, {
      search,
      ...(limit !== undefined ? { limit } : {}),
      ...(args.after != null ? { after: decodeKeyset(args.after, list) } : {}),
    });
    for (const row of rows) ctx.loaders.mcpServer.prime(row.id, row);
    return keysetConnection(rows, hasMore, args.after != null, (s) => s, list);
  },

  users: async (_root, args, ctx) => {
    const limit = checkFirst(args.first);
    const { rows, page } = await findUsers(ctx, {
      ...(limit !== undefined ? { limit } : {}),
      ...(args.after != null ? { cursor: args.after } : {}),
    });
    for (const row of rows) ctx.loaders.user.prime(row.id, row);
    return toConnection(rows, page.offset, page.total, (p) => userListCursor(ctx, p, page.limit));
  },
};
