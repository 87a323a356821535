/**
 * Translates the GraphQL TraceStatsInput into the REST TraceStatsRequest and validates it with the
 * REST request's own JSON Schema, so both transports accept exactly the same requests and refuse
 * the others with the same codes (invalid_field / validation_failed, REST field pointers).
 */
import type { PanelQueryInput, TraceStatsInput } from '../generated/graphql.ts';
import { restBodyCheck } from './rest-body-check.ts';
import { DIMENSIONS, MEASURES } from '../store/trace-port.ts';
import { traceStatsRequestSchema, type PanelQuery, type TraceStatsRequest } from '../skills/stats-request.ts';

const checkRequest = restBodyCheck(traceStatsRequestSchema);
const NAMED = new Set<string>([...MEASURES, ...DIMENSIONS]);

/** `order.by` may spell a measure or dimension as the schema does (TOKENS) or as REST does. */
function orderBy(by: string): string {
  const lower = by.toLowerCase();
  return by === by.toUpperCase() && NAMED.has(lower) ? lower : by;
}

function panelQuery(q: PanelQueryInput): PanelQuery {
  return {
    name: q.name,
    measure: q.measure,
    ...(q.filters != null
      ? {
          filters: q.filters.map((f) => ({
            key: f.key,
            op: f.op,
            ...(f.value != null ? { value: f.value as never } : {}),
          })),
        }
      : {}),
    ...(q.groupBy != null ? { group_by: q.groupBy } : {}),
    ...(q.limit != null ? { limit: q.limit } : {}),
    ...(q.order != null ? { order: { by: orderBy(q.order.by), direction: q.order.direction } } : {}),
  };
}

/** The REST request for this input; throws the REST validation errors when it breaks the schema. */
export function toTraceStatsRequest(input: TraceStatsInput): TraceStatsRequest {
  const request: TraceStatsRequest = {
    start_time_unix_seconds: input.startTimeUnixSeconds,
    end_time_unix_seconds: input.endTimeUnixSeconds,
    request_type: input.requestType,
    queries: input.queries.map(panelQuery),
    ...(input.bucket != null ? { bucket: input.bucket } : {}),
    ...(input.compare != null ? { compare: input.compare } : {}),
    ...(input.workspaceId != null ? { workspace_id: input.workspaceId } : {}),
  };
  checkRequest(request);
  return request;
}
