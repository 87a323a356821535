/** REST routes of the /agent/v1 area: search (operation 2) and profile image (operation 8). */
import type { FastifyInstance } from 'fastify';
import { getProfileImage } from '../agents/profile-image.ts';
import { SEARCH_STRATEGIES, SORT_FIELDS, searchAgents, type AgentSearchInput } from '../agents/search-agents.ts';
import { agentSchema } from './schemas/artifacts.ts';
import { offsetSchema, pageSchema, problemResponses } from './schemas/common.ts';

const searchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    query: { type: 'string', maxLength: 1000, description: 'Text to search for; empty lists every readable agent' },
    strategy: {
      type: 'string',
      enum: [...SEARCH_STRATEGIES],
      description: 'keyword (default, ranked full text), prefix or exact',
    },
    sorts: {
      type: 'array',
      maxItems: 5,
      items: { type: 'string', pattern: `^-?(${SORT_FIELDS.join('|')})$` },
      description: 'Field names, a leading - for descending; default relevance with a query, else name',
    },
    limit: { type: 'integer', minimum: 0, description: 'Default 20, larger values clamped to 100' },
    offset: offsetSchema,
    cursor: { type: 'string', maxLength: 512, description: 'Opaque position; not together with offset' },
    workspace_id: { type: 'string', minLength: 1, maxLength: 200, description: 'Only this workspace and its subtree' },
  },
} as const;

/** Raw bytes when the client asks for an image type and not for JSON; the JSON array otherwise. */
function wantsRawImage(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const types = accept
    .toLowerCase()
    .split(',')
    .map((t) => t.split(';')[0]?.trim() ?? '');
  return types.some((t) => t.startsWith('image/')) && !types.includes('application/json');
}

export function registerAgentRoutes(api: FastifyInstance): void {
  api.post(
    '/agent/v1/agents/search',
    {
      config: { responseCache: true },
      schema: {
        operationId: 'searchAgents',
        tags: ['agents'],
        summary: 'Search agents',
        body: searchBody,
        response: {
          200: {
            type: 'object',
            required: ['items', 'page'],
            properties: { items: { type: 'array', items: agentSchema }, page: pageSchema },
          },
          ...problemResponses([
            'invalid_json',
            'invalid_request',
            'unsupported_content_type',
            'invalid_field',
            'validation_failed',
            'not_found',
          ]),
        },
      },
    },
    async (request) => searchAgents(request.ctx, (request.body ?? {}) as AgentSearchInput),
  );

  api.get(
    '/agent/v1/agents/:agent_id/profile-image',
    {
      config: { responseCache: true },
      schema: {
        operationId: 'getAgentProfileImage',
        tags: ['agents'],
        summary: "An agent's profile image",
        description:
          'A JSON array of the image bytes (0-255); with `Accept: image/*` the raw image with its content type.',
        params: { type: 'object', required: ['agent_id'], properties: { agent_id: { type: 'string' } } },
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        response: {
          200: {
            description: 'The image bytes',
            content: {
              'application/json': { schema: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } } },
              'image/png': { schema: { type: 'string', format: 'binary' } },
            },
          },
          ...problemResponses(['invalid_query', 'not_found']),
        },
      },
    },
    async (request, reply) => {
      const { agent_id } = request.params as { agent_id: string };
      const image = await getProfileImage(request.ctx, agent_id);
      reply.header('vary', 'accept');
      if (wantsRawImage(request.headers.accept)) {
        return reply.type(image.content_type).send(Buffer.from(image.bytes));
      }
      return reply
        .type('application/json')
        .serializer((b: unknown) => b as string)
        .send(JSON.stringify(Array.from(image.bytes)));
    },
  );
}
