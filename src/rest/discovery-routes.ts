/**
 * Discovery documents in the formats agent tools read: an agent's A2A Agent Card and the AI
 * Catalog of everything the caller may read. Both need credentials like every read, and carry
 * absolute URLs from the request's base URL (shared/base-url.ts).
 */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getAgentCard } from '../agents/agent-card.ts';
import {
  A2A_AGENT_CARD_MEDIA_TYPE,
  AI_CATALOG_MAX_ENTRIES,
  AI_CATALOG_MEDIA_TYPE,
  getAiCatalog,
} from '../agents/ai-catalog.ts';
import { noQuery } from './schemas/paging.ts';
import { problemResponses } from './schemas/problems.ts';

const cardParams = {
  type: 'object',
  required: ['agent_id'],
  properties: { agent_id: { type: 'string' } },
  additionalProperties: false,
} as const;

const str = { type: 'string' } as const;
const strings = { type: 'array', items: str } as const;
const freeObject = { type: 'object', additionalProperties: true } as const;

/** The card's members as the OpenAPI document shows them (the A2A specification defines each). */
const agentCardSchema = {
  type: 'object',
  description: 'A2A protocol v1.0 AgentCard (specification/a2a.proto at v1.0.1), in its JSON form',
  required: [
    'name',
    'description',
    'supportedInterfaces',
    'version',
    'capabilities',
    'defaultInputModes',
    'defaultOutputModes',
    'skills',
  ],
  properties: {
    name: str,
    description: str,
    supportedInterfaces: {
      type: 'array',
      items: {
        type: 'object',
        required: ['url', 'protocolBinding', 'protocolVersion'],
        properties: { url: str, protocolBinding: str, protocolVersion: str },
      },
    },
    version: str,
    capabilities: freeObject,
    securitySchemes: freeObject,
    securityRequirements: { type: 'array', items: freeObject },
    defaultInputModes: strings,
    defaultOutputModes: strings,
    skills: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'description', 'tags'],
        properties: { id: str, name: str, description: str, tags: strings },
      },
    },
    iconUrl: str,
  },
} as const;

const aiCatalogSchema = {
  type: 'object',
  description: `AI Catalog (Agent-Card/ai-card specification/ai-catalog.md, specVersion 1.0), at most ${AI_CATALOG_MAX_ENTRIES} entries`,
  required: ['specVersion', 'host', 'entries'],
  properties: {
    specVersion: str,
    host: { type: 'object', required: ['displayName'], properties: { displayName: str, identifier: str } },
    entries: {
      type: 'array',
      maxItems: AI_CATALOG_MAX_ENTRIES,
      items: {
        type: 'object',
        required: ['identifier', 'displayName', 'mediaType', 'url'],
        properties: {
          identifier: str,
          displayName: str,
          mediaType: str,
          url: str,
          version: str,
          description: str,
          tags: strings,
          updatedAt: str,
        },
      },
    },
    metadata: {
      type: 'object',
      description: 'Present when the caller may read more than the bound: `truncated` and `totalEntries`',
      properties: { truncated: { type: 'boolean' }, totalEntries: { type: 'integer' } },
    },
  },
} as const;

/**
 * Answers that hold the request's own origin are cached only when the base URL is configured: the
 * response cache's key does not hold the `Host` header.
 */
const fixedBaseUrl = (request: FastifyRequest) => request.ctx.services.config.publicBaseUrl !== undefined;

/**
 * The card's media type: `application/json`, or the AI Catalog's name for an A2A Agent Card when the
 * client asks for it by name (A2A v1.0.1 registers `application/a2a+json` for its HTTP+JSON
 * binding's messages only, and no type for the card).
 */
function cardMediaType(accept: string | undefined): string {
  const named = (accept ?? '')
    .toLowerCase()
    .split(',')
    .map((part) => part.split(';').map((p) => p.trim()))
    .some(([range, ...params]) => range === A2A_AGENT_CARD_MEDIA_TYPE && !params.some((p) => /^q=0(\.0*)?$/.test(p)));
  return named ? A2A_AGENT_CARD_MEDIA_TYPE : 'application/json';
}

function sendJson(reply: FastifyReply, type: string, body: unknown): FastifyReply {
  return reply
    .type(type)
    .serializer((b: unknown) => b as string)
    .send(JSON.stringify(body));
}

export function registerDiscoveryRoutes(app: FastifyInstance): void {
  const api = app.withTypeProvider<JsonSchemaToTsProvider>();
  api.get(
    '/agent/v1/agents/:agent_id/card',
    {
      config: { responseCache: fixedBaseUrl },
      schema: {
        operationId: 'getAgentCard',
        tags: ['agents'],
        summary: "An agent's A2A Agent Card",
        description:
          'The agent as an A2A protocol v1.0 AgentCard. `application/json`, or `application/a2a-agent-card+json` when `Accept` names it.',
        params: cardParams,
        querystring: noQuery,
        response: {
          200: {
            description: 'The Agent Card',
            content: {
              'application/json': { schema: agentCardSchema },
              [A2A_AGENT_CARD_MEDIA_TYPE]: { schema: agentCardSchema },
            },
          },
          ...problemResponses(['invalid_query', 'invalid_request', 'not_found']),
        },
      },
    },
    async (request, reply) => {
      const card = await getAgentCard(request.ctx, request.params.agent_id);
      reply.header('vary', 'accept');
      return sendJson(reply, cardMediaType(request.headers.accept), card);
    },
  );

  api.get(
    '/.well-known/ai-catalog.json',
    {
      config: { responseCache: fixedBaseUrl },
      schema: {
        operationId: 'getAiCatalog',
        tags: ['discovery'],
        summary: 'The AI Catalog of what the caller may read',
        description: `Every agent the caller may read, with the URL of its Agent Card; at most ${AI_CATALOG_MAX_ENTRIES} entries.`,
        querystring: noQuery,
        response: {
          200: { description: 'The AI Catalog', content: { [AI_CATALOG_MEDIA_TYPE]: { schema: aiCatalogSchema } } },
          ...problemResponses(['invalid_query', 'invalid_request']),
        },
      },
    },
    async (request, reply) => sendJson(reply, AI_CATALOG_MEDIA_TYPE, await getAiCatalog(request.ctx)),
  );
}
