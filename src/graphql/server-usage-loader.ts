/**
 * `McpServer.usage`: the servers the executor asks for together (a list, a nested field, `_entities`,
 * under any number of aliases) are one trace-store query (mcp-servers/usage.ts) through one
 * DataLoader per request. Before that query a batch spends the work of one usage window from the
 * operation's trace-work budget (limits/trace-budget.ts).
 */
import DataLoader from 'dataloader';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../context.ts';
import { mcpServerUsage, type McpServerUsage } from '../mcp-servers/usage.ts';
import { OPERATION_TOO_LARGE } from './limits/list-budget.ts';
import { spendServerUsageWork } from './limits/trace-budget.ts';
import { MAX_USAGE_LOOKUPS } from './tool-usage-loader.ts';

const byRequest = new WeakMap<RequestContext, DataLoader<string, McpServerUsage>>();

/** The usage of the server `id` (of the caller's organization) over the caller's readable workspaces. */
export function serverUsage(ctx: RequestContext, id: string): Promise<McpServerUsage> {
  let loader = byRequest.get(ctx);
  if (loader === undefined) {
    loader = new DataLoader((ids) => usageOf(ctx, ids));
    byRequest.set(ctx, loader);
  }
  return loader.load(id);
}

async function usageOf(ctx: RequestContext, ids: readonly string[]): Promise<McpServerUsage[]> {
  if (ids.length > MAX_USAGE_LOOKUPS)
    throw new GraphQLError(
      `McpServer.usage looks up at most ${MAX_USAGE_LOOKUPS.toLocaleString('en-US')} servers at once; ask for fewer servers`,
      {
        extensions: {
          code: OPERATION_TOO_LARGE,
          http: { status: 400 },
          limit: 'usage_lookups',
          value: ids.length,
          max: MAX_USAGE_LOOKUPS,
        },
      },
    );
  spendServerUsageWork(ctx);
  const usage = await mcpServerUsage(ctx, ids);
  return ids.map((id) => usage.get(id) as McpServerUsage);
}
