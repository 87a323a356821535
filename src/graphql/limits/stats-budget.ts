/**
 * The trace-engine work one GraphQL operation may ask for (DESIGN §12). A `traceStats` field runs
 * the aggregations of a REST statistics request; under a list or `_entities` one operation could
 * run thousands of them while its static cost counts only the points of each answer (an attack of
 * 300 `_entities` × 20 queries stalled a replica for 25 s). Each operation gets a budget of work
 * (stats-request.ts `statsWork`: aggregations × weeks + 1): twice what the largest statistics
 * request costs (4,320), and room for a page of per-skill summaries (a 7-day, three-query scalar
 * costs 6).
 * A `traceStats` past it fails with OPERATION_TOO_LARGE (HTTP 400) before any aggregation runs.
 */
import { GraphQLError } from 'graphql';
import { MAX_STATS_WORK, statsWork, type TraceStatsRequest } from '../../traces/stats-request.ts';
import { OPERATION_TOO_LARGE } from './list-budget.ts';

/** Work units one operation may spend on trace statistics. */
const BUDGET = 2 * MAX_STATS_WORK;

const spentBy = new WeakMap<object, number>();

/** Spends a statistics request's work from its operation's budget (keyed by the request context), or refuses it. */
export function spendStatsWork(context: object, req: TraceStatsRequest): void {
  const spent = (spentBy.get(context) ?? 0) + statsWork(req);
  spentBy.set(context, spent);
  if (spent > BUDGET)
    throw new GraphQLError(
      `this operation's trace statistics need more than ${BUDGET} units of work (aggregations × weeks + 1); ask for fewer skills, queries or weeks per operation`,
      {
        extensions: {
          code: OPERATION_TOO_LARGE,
          http: { status: 400 },
          limit: 'stats_work',
          value: spent,
          max: BUDGET,
        },
      },
    );
}
