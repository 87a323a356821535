/**
 * Trace statistics of an agent: operation 1's request and answer over the spans of the traces the
 * agent takes part in (a trace belongs to an agent when any of its spans names it, otlp/ingest.ts),
 * in the caller's readable workspaces. The agent is resolved as any agent read (404 unknown or not
 * discoverable, 403 unreadable); everything after is skills/trace-stats.ts. Transport-free.
 */
import type { RequestContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import type { TraceStatsRequest } from '../skills/stats-request.ts';
import type { StatsAnswer } from '../skills/stats-shapes.ts';
import { subjectTraceStats } from '../skills/trace-stats.ts';

/**
 * `admit`, when given, sees the request once it is known good (agent readable, rules and answer
 * size checked) and before any aggregation: a transport's own budget may refuse it.
 */
export async function queryAgentTraceStats(
  ctx: RequestContext,
  agentId: string,
  req: TraceStatsRequest,
  admit?: (req: TraceStatsRequest) => void,
): Promise<StatsAnswer> {
  const agent = await ctx.loaders.artifact.load(agentId);
  if (agent === null || agent.kind !== 'agent') throw new ApiError('not_found', `agent ${agentId} not found`);
  (await ctx.access()).assertReadable(agent.workspace_id, 'agent', agentId);
  return subjectTraceStats(ctx, { agent: agentId }, req, admit);
}
