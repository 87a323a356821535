/**
 * Insights over REST: the insights about a skill and about an agent (newest window first, keyset
 * pages), and a workspace's webhook subscriptions (its admins create, list and delete them).
 */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listSubjectInsights } from '../insights/list-insights.ts';
import {
  createSubscription,
  deleteSubscription,
  listSubscriptions,
  subscriptionBodySchema,
} from '../insights/webhook-subscriptions.ts';
import { noQuery } from './schemas/paging.ts';
import { BODY_PROBLEMS, problemResponses } from './schemas/problems.ts';
import {
  createdSubscriptionSchema,
  insightListQuery,
  insightPageSchema,
  subscriptionListSchema,
} from './schemas/insights.ts';

const skillParams = {
  type: 'object',
  required: ['skill_id'],
  properties: { skill_id: { type: 'string' } },
} as const;
const agentParams = {
  type: 'object',
  required: ['agent_id'],
  properties: { agent_id: { type: 'string' } },
} as const;
const workspaceParams = {
  type: 'object',
  required: ['workspace_id'],
  properties: { workspace_id: { type: 'string' } },
} as const;
const subscriptionParams = {
  type: 'object',
  required: ['workspace_id', 'webhook_id'],
  properties: { workspace_id: { type: 'string' }, webhook_id: { type: 'string' } },
} as const;

/**
 * `kind` may be repeated (`kind=a&kind=b`) or a comma-separated list (`kind=a,b`), or both: before
 * the query string is validated, its values become one list (duplicates dropped).
 */
async function kindsAsList(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown>;
  const raw: unknown = query.kind;
  if (raw === undefined) return;
  const values = (Array.isArray(raw) ? (raw as unknown[]) : [raw]).flatMap((v) =>
    typeof v === 'string' ? v.split(',').map((k) => k.trim()) : [v],
  );
  query.kind = [...new Set(values)];
}

const listProblems = problemResponses(['invalid_query', 'not_found']);

export function registerInsightRoutes(app: FastifyInstance): void {
  const api = app.withTypeProvider<JsonSchemaToTsProvider>();
  api.get(
    '/skill/v1/skills/:skill_id/insights',
    {
      preValidation: kindsAsList,
      schema: {
        operationId: 'listSkillInsights',
        tags: ['skills'],
        summary: 'Insights about a skill',
        description:
          'Insights about the skill in the workspaces the caller can read, newest window first; each payload is valid against its kind in listInsightSchemas.',
        params: skillParams,
        querystring: insightListQuery,
        response: { 200: insightPageSchema, ...listProblems },
      },
    },
    async (request) => listSubjectInsights(request.ctx, { type: 'skill', id: request.params.skill_id }, request.query),
  );
  api.get(
    '/agent/v1/agents/:agent_id/insights',
    {
      preValidation: kindsAsList,
      schema: {
        operationId: 'listAgentInsights',
        tags: ['agents'],
        summary: 'Insights about an agent',
        description: 'As listSkillInsights, about an agent.',
        params: agentParams,
        querystring: insightListQuery,
        response: { 200: insightPageSchema, ...listProblems },
      },
    },
    async (request) => listSubjectInsights(request.ctx, { type: 'agent', id: request.params.agent_id }, request.query),
  );

  api.post(
    '/skill/v1/workspaces/:workspace_id/webhooks',
    {
      // Every creation counts, refused ones too: each may resolve a host name of the caller's choosing.
      config: { rateLimited: 'webhooks.create' },
      schema: {
        operationId: 'createWebhookSubscription',
        tags: ['skills'],
        summary: "Subscribe a URL to a workspace's insights (workspace admins)",
        description:
          'Deliveries follow the Standard Webhooks specification, signed with the `secret` of this answer: it is shown this once.',
        params: workspaceParams,
        querystring: noQuery,
        body: subscriptionBodySchema,
        response: {
          201: createdSubscriptionSchema,
          ...problemResponses([...BODY_PROBLEMS, 'not_found', 'rate_limited']),
        },
      },
    },
    async (request, reply) => {
      const created = await createSubscription(request.ctx, request.params.workspace_id, request.body);
      return reply.code(201).send(created);
    },
  );
  api.get(
    '/skill/v1/workspaces/:workspace_id/webhooks',
    {
      schema: {
        operationId: 'listWebhookSubscriptions',
        tags: ['skills'],
        summary: "A workspace's webhook subscriptions (workspace admins; never their secrets)",
        params: workspaceParams,
        querystring: noQuery,
        response: { 200: subscriptionListSchema, ...problemResponses(['invalid_query', 'not_found']) },
      },
    },
    async (request) => ({ items: await listSubscriptions(request.ctx, request.params.workspace_id) }),
  );
  api.delete(
    '/skill/v1/workspaces/:workspace_id/webhooks/:webhook_id',
    {
      schema: {
        operationId: 'deleteWebhookSubscription',
        tags: ['skills'],
        summary: 'Delete a webhook subscription and the deliveries it still owes (workspace admins)',
        params: subscriptionParams,
        querystring: noQuery,
        response: {
          204: { description: 'Deleted', type: 'null' },
          ...problemResponses(['invalid_query', 'not_found']),
        },
      },
    },
    async (request, reply) => {
      await deleteSubscription(request.ctx, request.params.workspace_id, request.params.webhook_id);
      return reply.code(204).send(null);
    },
  );
}
