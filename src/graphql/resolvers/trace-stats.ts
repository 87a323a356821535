/** The trace statistics envelope: its data union told apart by the request type it answers. */
import type { TraceStatsDataResolvers } from '../../generated/graphql.ts';

const TYPE_OF_REQUEST = { scalar: 'ScalarStats', table: 'TableStats', time_series: 'TimeSeriesStats' } as const;

/** `data` (and `comparison.data`) resolve to the shape of their `request_type`. */
export const TraceStatsData: TraceStatsDataResolvers = {
  __resolveType: (data) => TYPE_OF_REQUEST[data.request_type as keyof typeof TYPE_OF_REQUEST],
};
