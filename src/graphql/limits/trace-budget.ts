/**
 * The trace-store work one GraphQL operation may ask for (DESIGN §12), in the statistics' work
 * units. A field that reads the trace store can sit under a list or `_entities`, so one operation
 * could run thousands of reads while its static cost counts only the size of each answer (300
 * `_entities` × 20 statistics queries stalled a replica for 25 s; 30 aliases of `Tool.usage` with
 * different windows cost 5 s of trace-store time). Each operation gets one budget for all of them:
 * twice what the largest statistics request costs (4,320), room for a page of per-skill summaries
 * (a 7-day, three-query scalar costs 6).
 *
 * - `Skill.traceStats` and `Agent.traceStats` spend their request's work (skills/stats-request.ts
 *   `statsWork`: aggregations × (weeks + 1)) when it runs, once its input is known good and before
 *   any aggregation.
 * - `Tool.usage(since:)` spends the work of each distinct window of a batch (tool-usage.ts
 *   `usageWindowWork`) before the batch's one trace-store query; its windows are also priced
 *   before anything executes (limits-plugin.ts, from the windows analyze-operation.ts finds), the
 *   same function over the same windows, so the analysis and the execution agree.
 *
 * - `McpServer.usage` spends, per batch of servers (one trace-store query), the work of one usage
 *   window of USAGE_WINDOW_DAYS days; priced once before anything executes when the operation
 *   selects it anywhere.
 *
 * A read past the budget fails with OPERATION_TOO_LARGE (HTTP 400) before it reaches the store.
 */
import { GraphQLError } from 'graphql';
import { USAGE_WINDOW_DAYS } from '../../mcp-servers/usage.ts';
import { usageWindowWork } from '../../tools/tool-usage.ts';
import type { RequestContext } from '../../context.ts';
import { MAX_STATS_WORK, answerPoints, statsWork, type TraceStatsRequest } from '../../skills/stats-request.ts';
import { OPERATION_TOO_LARGE } from './list-budget.ts';

/** Work units one operation may spend on trace-store reads. */
export const TRACE_WORK_BUDGET = 2 * MAX_STATS_WORK;

const spentBy = new WeakMap<object, number>();
const pointsBy = new WeakMap<object, number>();

const nowS = () => Math.floor(Date.now() / 1000);

/** The work of one batch of `McpServer.usage` lookups: a usage window of USAGE_WINDOW_DAYS days. */
export const SERVER_USAGE_WORK = usageWindowWork(0, USAGE_WINDOW_DAYS * 86_400);

/** The work of `Tool.usage` lookups with these windows: each distinct window once. */
export function usageWork(windows: Iterable<number | null>, now = nowS()): number {
  let work = 0;
  for (const since of new Set(windows)) work += usageWindowWork(since, now);
  return work;
}

function spend(context: object, units: number, advice: string): void {
  const spent = (spentBy.get(context) ?? 0) + units;
  spentBy.set(context, spent);
  if (spent > TRACE_WORK_BUDGET)
    throw new GraphQLError(
      `this operation's trace-store reads need more than ${TRACE_WORK_BUDGET} units of work; ${advice}`,
      {
        extensions: {
          code: OPERATION_TOO_LARGE,
          http: { status: 400 },
          limit: 'trace_work',
          value: spent,
          max: TRACE_WORK_BUDGET,
        },
      },
    );
}

/**
 * Spends a statistics request's work from its operation's budget (keyed by the request context),
 * and its answer's points from the operation's cost limit (GRAPHQL_MAX_COST), or refuses it. The
 * static cost prices `traceStats` under an unpaged list (`usedBy`, `versions`) at the list's
 * assumed size; when the list holds more, the points its answers may hold are counted here, as
 * they run, so no operation answers more values than the limit.
 */
export function spendStatsWork(context: RequestContext, req: TraceStatsRequest): void {
  spend(context, statsWork(req), 'ask for fewer skills, queries or weeks per operation (aggregations × (weeks + 1))');
  const points = (pointsBy.get(context) ?? 0) + answerPoints(req);
  pointsBy.set(context, points);
  const max = context.services.config.bounds.graphqlMaxCost;
  if (points > max)
    throw new GraphQLError(
      `this operation's statistics answers could hold more than ${max} values (queries × groups × buckets, summed over every traceStats); ask for fewer agents, skills, groups or buckets`,
      {
        extensions: { code: OPERATION_TOO_LARGE, http: { status: 400 }, limit: 'cost', value: points, max },
      },
    );
}

/** Spends the work of one batch of `Tool.usage` lookups with these windows, or refuses the batch. */
export function spendUsageWork(context: object, windows: Iterable<number | null>): void {
  spend(context, usageWork(windows), 'ask for fewer distinct `since` windows, or shorter ones, per operation');
}

/** Spends the work of one batch of `McpServer.usage` lookups, or refuses the batch. */
export function spendServerUsageWork(context: object): void {
  spend(context, SERVER_USAGE_WORK, 'ask for the usage of MCP servers at fewer levels of the operation');
}
