/**
 * Trace statistics: operation 1, `POST /skill/v1/skills/:skill_id/traces/stats/query`, and the same
 * request and answer over an agent's traces, `POST /agent/v1/agents/:agent_id/traces/stats/query`
 * (the OTLP receiver is otlp-routes.ts).
 */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance } from 'fastify';
import { queryAgentTraceStats } from '../agents/trace-stats.ts';
import { queryTraceStats } from '../skills/trace-stats.ts';
import { traceStatsRequestSchema } from '../skills/stats-request.ts';
import { noQuery } from './schemas/paging.ts';
import { BODY_PROBLEMS, problemResponses } from './schemas/problems.ts';
import { statsAnswerSchema } from './schemas/trace-stats.ts';

const statsProblems = problemResponses([
  ...BODY_PROBLEMS,
  'not_found',
  'traces_unavailable',
  'missing_org',
  'untrusted_issuer',
]);

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
        response: { 200: statsAnswerSchema, ...statsProblems },
      },
    },
    async (request) => {
      return queryTraceStats(request.ctx, request.params.skill_id, request.query.version_ordinal, request.body);
    },
  );
  api.post(
    '/agent/v1/agents/:agent_id/traces/stats/query',
    {
      schema: {
        operationId: 'queryAgentTraceStats',
        tags: ['agents'],
        summary: 'Trace statistics of an agent',
        description:
          "The request and answer of queryTraceStats, over the spans of the traces the agent takes part in: a trace belongs to the agent when any of its spans names it (gen_ai.agent.id, or sent with the agent's own credentials).",
        params: {
          type: 'object',
          required: ['agent_id'],
          properties: { agent_id: { type: 'string' } },
        } as const,
        querystring: noQuery,
        body: traceStatsRequestSchema,
        response: { 200: statsAnswerSchema, ...statsProblems },
      },
    },
    async (request) => queryAgentTraceStats(request.ctx, request.params.agent_id, request.body),
  );
}
