/** REST routes of the /agent/v1 area: search (operation 2) and profile image (operation 8). */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { getProfileImage } from '../agents/profile-image.ts';
import { agentSearchSchema, searchAgents, type AgentSearchResult } from '../agents/search-agents.ts';
import { agentSchema } from './schemas/artifacts.ts';
import { pageSchema, problemResponses } from './schemas/common.ts';

const imageParams = {
  type: 'object',
  required: ['agent_id'],
  properties: { agent_id: { type: 'string' } },
  additionalProperties: false,
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

export function registerAgentRoutes(app: FastifyInstance): void {
  const api = app.withTypeProvider<JsonSchemaToTsProvider>();
  // Replies are the handlers' declared types (the response schemas serialize them); requests come typed from the schemas.
  api.post<{ Reply: AgentSearchResult }>(
    '/agent/v1/agents/search',
    {
      config: { responseCache: true },
      schema: {
        operationId: 'searchAgents',
        tags: ['agents'],
        summary: 'Search agents',
        body: agentSearchSchema,
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
    async (request) => searchAgents(request.ctx, request.body ?? {}),
  );

  api.get<{ Params: FromSchema<typeof imageParams>; Reply: Buffer | string }>(
    '/agent/v1/agents/:agent_id/profile-image',
    {
      config: { responseCache: true },
      schema: {
        operationId: 'getAgentProfileImage',
        tags: ['agents'],
        summary: "An agent's profile image",
        description:
          'A JSON array of the image bytes (0-255); with `Accept: image/*` the raw image with its content type.',
        params: imageParams,
        querystring: { type: 'object', additionalProperties: false, properties: {} } as const,
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
      const image = await getProfileImage(request.ctx, request.params.agent_id);
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
