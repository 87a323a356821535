/** Operation 1: `POST /skill/v1/skills/:skill_id/traces/stats/query` (the OTLP receiver is otlp-routes.ts). */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance } from 'fastify';
import { queryTraceStats } from '../skills/trace-stats.ts';
import { traceStatsRequestSchema } from '../skills/stats-request.ts';
import { BODY_PROBLEMS, problemResponses } from './schemas/problems.ts';

const nullable = <const S extends object>(schema: S) => ({ anyOf: [schema, { type: 'null' }] }) as const;
const num = { type: ['number', 'null'] } as const;

const dataSchema = {
  type: 'object',
  required: ['request_type'],
  properties: {
    request_type: { type: 'string', enum: ['scalar', 'table', 'time_series'] },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['query_name', 'measure'],
        properties: {
          query_name: { type: 'string' },
          measure: { type: 'string' },
          value: num,
          unit: { type: ['string', 'null'] },
        },
      },
    },
    columns: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'column_type'],
        properties: {
          name: { type: 'string' },
          column_type: { type: 'string', enum: ['group', 'measure'] },
          unit: { type: ['string', 'null'] },
        },
      },
    },
    rows: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          groups: { type: 'object', additionalProperties: true },
          values: { type: 'object', additionalProperties: true },
        },
      },
    },
    series: {
      type: 'array',
      items: {
        type: 'object',
        required: ['query_name', 'measure', 'points'],
        properties: {
          query_name: { type: 'string' },
          measure: { type: 'string' },
          unit: { type: ['string', 'null'] },
          groups: { type: 'object', additionalProperties: true },
          points: {
            type: 'array',
            items: {
              type: 'object',
              required: ['timestamp_unix_seconds'],
              properties: { timestamp_unix_seconds: { type: 'integer' }, value: num },
            },
          },
        },
      },
    },
  },
} as const;

const envelopeSchema = {
  type: 'object',
  required: ['data', 'meta'],
  properties: {
    data: dataSchema,
    meta: { type: 'object', properties: { warnings: { type: 'array', items: { type: 'string' } } } },
    comparison: nullable({
      type: 'object',
      required: ['start_time_unix_seconds', 'end_time_unix_seconds', 'data'],
      properties: {
        start_time_unix_seconds: { type: 'integer' },
        end_time_unix_seconds: { type: 'integer' },
        data: dataSchema,
      },
    }),
  },
} as const;

export function registerTraceRoutes(app: FastifyInstance): void {
  const api = app.withTypeProvider<JsonSchemaToTsProvider>();
  api.post(
    '/skill/v1/skills/:skill_id/traces/stats/query',
    {
      schema: {
        operationId: 'queryTraceStats',
        tags: ['skills'],
        summary: 'Trace statistics of a skill',
        params: {
          type: 'object',
          required: ['skill_id'],
          properties: { skill_id: { type: 'string' } },
        } as const,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { version_ordinal: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
        } as const,
        body: traceStatsRequestSchema,
        response: {
          200: envelopeSchema,
          ...problemResponses([...BODY_PROBLEMS, 'not_found', 'traces_unavailable', 'missing_org', 'untrusted_issuer']),
        },
      },
    },
    async (request) => {
      return queryTraceStats(request.ctx, request.params.skill_id, request.query.version_ordinal, request.body);
    },
  );
}
