/** REST routes of the /mcp/v1 area: tool list (operation 6) and aggregate (operation 3). */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import {
  TOOL_GROUP_FIELDS,
  TOOL_METRICS,
  aggregateTools,
  asksTraceMetrics,
  type ToolAggregateInput,
  type ToolAggregateResult,
} from '../tools/aggregate-tools.ts';
import { listTools } from '../tools/list-tools.ts';
import { sendJsonPage } from './json-page.ts';
import { toolSchema } from '../domain/artifact-schemas.ts';
import { limitOffsetQuery, noQuery, offsetSchema, pageSchema } from './schemas/paging.ts';
import { BODY_PROBLEMS, problemResponses } from './schemas/problems.ts';

const filterValue = { type: ['string', 'boolean'], maxLength: 500 } as const;

const aggregateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    group_by: {
      type: 'array',
      maxItems: TOOL_GROUP_FIELDS.length,
      items: { type: 'string', enum: [...TOOL_GROUP_FIELDS] },
    },
    filters: {
      type: 'object',
      description: 'Equality filters on group fields; an array means any of its values',
      additionalProperties: false,
      properties: Object.fromEntries(
        TOOL_GROUP_FIELDS.map((f) => [
          f,
          { anyOf: [filterValue, { type: 'array', maxItems: 100, items: filterValue }] },
        ]),
      ),
    },
    metrics: {
      type: 'array',
      maxItems: TOOL_METRICS.length,
      items: { type: 'string', enum: [...TOOL_METRICS] },
      description:
        'Default count, servers, latest_updated_at. calls, error_rate, p95_latency_ms and last_called_at come from the tool_call spans of the same scope (matched by tool name and MCP server)',
    },
    since_unix_seconds: {
      type: 'integer',
      minimum: 0,
      maximum: 253402300799,
      description: 'Trace metrics count calls starting at or after this time; default every stored call',
    },
    limit: { type: 'integer', minimum: 0, description: 'Groups per page; default 50, clamped to 200' },
    offset: offsetSchema,
    workspace_id: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;

const groupSchema = {
  type: 'object',
  required: ['key', 'metrics'],
  properties: {
    key: { type: 'object', additionalProperties: { type: ['string', 'boolean', 'null'] } },
    metrics: { type: 'object', additionalProperties: { type: ['number', 'string', 'null'] } },
  },
} as const;

export function registerToolRoutes(app: FastifyInstance): void {
  const api = app.withTypeProvider<JsonSchemaToTsProvider>();
  // The items come as ready JSON text (sendJsonPage); the response schema documents them.
  api.get<{ Querystring: FromSchema<typeof limitOffsetQuery> }>(
    '/mcp/v1/tools',
    {
      config: { responseCache: true, rateLimited: 'tools.list' },
      schema: {
        operationId: 'listTools',
        tags: ['tools'],
        summary: 'List the tool catalog',
        querystring: limitOffsetQuery,
        response: {
          200: {
            type: 'object',
            required: ['items', 'page'],
            properties: { items: { type: 'array', items: toolSchema }, page: pageSchema },
          },
          ...problemResponses(['invalid_query', 'rate_limited']),
        },
      },
    },
    async (request, reply) =>
      sendJsonPage(reply, await listTools(request.ctx, request.query.limit, request.query.offset)),
  );

  // The filters' schema is built per group field, beyond what FromSchema can read: the body type is the handler's.
  api.post<{ Body: ToolAggregateInput | undefined; Reply: ToolAggregateResult }>(
    '/mcp/v1/tools/aggregate',
    {
      config: {
        // Trace metrics change with every ingested span, which the cache cannot see.
        responseCache: (request) => !asksTraceMetrics(request.body as ToolAggregateInput | undefined),
        rateLimited: 'tools.aggregate',
        emptyBodyIsObject: true,
      },
      schema: {
        operationId: 'aggregateTools',
        tags: ['tools'],
        summary: 'Aggregate the tool catalog',
        querystring: noQuery,
        body: aggregateBody,
        response: {
          200: {
            type: 'object',
            required: ['groups', 'page'],
            properties: { groups: { type: 'array', items: groupSchema }, page: pageSchema },
          },
          ...problemResponses([...BODY_PROBLEMS, 'not_found', 'rate_limited', 'traces_unavailable']),
        },
      },
    },
    async (request) => aggregateTools(request.ctx, request.body ?? {}),
  );
}
