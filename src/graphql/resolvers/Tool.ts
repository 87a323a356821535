/** Tool: the shared artifact fields, its MCP server, the agents that use it and its calls from telemetry. */
import type { ToolResolvers } from '../../generated/graphql.ts';
import { readableArtifact, readableMcpServerOrNull } from '../authorize.ts';
import { relatedArtifacts } from '../relationships.ts';
import { toolUsage } from '../tool-usage-loader.ts';
import { artifactFields } from './Artifact.ts';

/** Resolvers of `Tool` (see the file comment). */
export const Tool: ToolResolvers = {
  __resolveReference: (ref, ctx) => readableArtifact(ctx, ref.id, 'tool'),
  ...artifactFields,
  server: (row, _args, ctx) => (row.server_id === undefined ? null : readableMcpServerOrNull(ctx, row.server_id)),
  usedBy: (row, _args, ctx) => relatedArtifacts(ctx, row, 'uses_tool', 'incoming', 'agent'),
  usage: async (row, args, ctx) => {
    const u = await toolUsage(ctx, row, args.since ?? null);
    return {
      calls: u.calls,
      errorRate: u.error_rate,
      p95LatencyMs: u.p95_latency_ms,
      lastCalledAt: u.last_called_at,
    };
  },
};
