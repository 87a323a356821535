/**
 * `Tool.usage(since:)`: the lookups the executor asks for together (the tools of a list or of
 * `_entities`, under any number of aliases) are one trace-store query whatever their windows: one
 * DataLoader per request, keyed by tool and window. Before that query a batch spends, for each
 * distinct window, its work from the operation's trace-work budget (limits/trace-budget.ts) and one
 * call of the caller's 'tools.aggregate' quota, on every path (a list, a nested field, `_entities`):
 * a window is the work of one REST aggregate with trace metrics, which spends one such call.
 */
import DataLoader from 'dataloader';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { rateLimitedError } from '../rate-limits.ts';
import { toolUsageOfTools, type TraceMetricValues, type UsageLookup } from '../tools/tool-usage.ts';
import { OPERATION_TOO_LARGE } from './limits/list-budget.ts';
import { spendUsageWork } from './limits/trace-budget.ts';

/**
 * Lookups one trace-store query may carry: the tool aggregate's bound (tool-usage.ts), which also
 * keeps the bound parameters within PostgreSQL's 65,535.
 */
export const MAX_USAGE_LOOKUPS = 10_000;

const byRequest = new WeakMap<RequestContext, DataLoader<UsageLookup, TraceMetricValues, string>>();

export function toolUsage(
  ctx: RequestContext,
  tool: ArtifactVersion,
  since: number | null,
): Promise<TraceMetricValues> {
  let loader = byRequest.get(ctx);
  if (loader === undefined) {
    loader = new DataLoader((lookups) => usageOf(ctx, lookups), {
      cacheKeyFn: (l) => `${l.sinceS ?? 'all'}|${l.tool.id}`,
    });
    byRequest.set(ctx, loader);
  }
  return loader.load({ tool, sinceS: since });
}

async function usageOf(ctx: RequestContext, lookups: readonly UsageLookup[]): Promise<TraceMetricValues[]> {
  if (lookups.length > MAX_USAGE_LOOKUPS)
    throw new GraphQLError(
      `Tool.usage looks up at most ${MAX_USAGE_LOOKUPS.toLocaleString('en-US')} (tool, since) pairs at once; ask for fewer tools or windows`,
      {
        extensions: {
          code: OPERATION_TOO_LARGE,
          http: { status: 400 },
          limit: 'usage_lookups',
          value: lookups.length,
          max: MAX_USAGE_LOOKUPS,
        },
      },
    );
  const windows = new Set(lookups.map((l) => l.sinceS));
  spendUsageWork(ctx, windows);
  const quota = await ctx.spendQuota('tools.aggregate', windows.size);
  if (quota.exceeded) throw rateLimitedError(quota);
  return toolUsageOfTools(ctx, lookups);
}
