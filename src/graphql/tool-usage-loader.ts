/**
 * `Tool.usage(since:)`: the tools of one query level asking the same `since` are looked up in one
 * trace-store query (DataLoader per request, as every nested lookup), not one query per tool.
 */
import DataLoader from 'dataloader';
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { toolUsageOfTools, type TraceMetricValues } from '../tools/tool-usage.ts';

const byRequest = new WeakMap<
  RequestContext,
  Map<number | null, DataLoader<ArtifactVersion, TraceMetricValues, string>>
>();

export function toolUsage(
  ctx: RequestContext,
  tool: ArtifactVersion,
  since: number | null,
): Promise<TraceMetricValues> {
  let loaders = byRequest.get(ctx);
  if (loaders === undefined) {
    loaders = new Map();
    byRequest.set(ctx, loaders);
  }
  let loader = loaders.get(since);
  if (loader === undefined) {
    loader = new DataLoader((tools) => toolUsageOfTools(ctx, tools, since), { cacheKeyFn: (t) => t.id });
    loaders.set(since, loader);
  }
  return loader.load(tool);
}
