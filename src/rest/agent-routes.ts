/** REST routes of the /agent/v1 area: search (operation 2) and profile image (operation 8). */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance } from 'fastify';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { getProfileImage } from '../agents/profile-image.ts';
import {
  SEARCH_STRATEGIES,
  SORT_FIELDS,
  searchAgents,
  type AgentSearchInput,
  type AgentSort,
} from '../agents/search-agents.ts';
import { sendJsonPage } from './json-page.ts';
import { agentSchema } from '../domain/artifact-schemas.ts';
import { noQuery, pageSchema } from './schemas/paging.ts';
import { BODY_PROBLEMS, problemResponses } from './schemas/problems.ts';

/** The body of operation 2. */
const searchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    query: { type: 'string', maxLength: 1000, description: 'Text to search for; empty lists every readable agent' },
    strategy: {
      type: 'string',
      enum: SEARCH_STRATEGIES,
      description: 'keyword (default, ranked full text), prefix or exact',
    },
    sorts: {
      type: 'array',
      maxItems: 5,
      items: { type: 'string', pattern: `^-?(${SORT_FIELDS.join('|')})$` },
      description: 'Field names, a leading - for descending; default relevance with a query, else name',
    },
    limit: { type: 'integer', minimum: 0, description: 'Default 20, larger values clamped to 100' },
    offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    cursor: { type: 'string', maxLength: 512, description: 'Opaque position; not together with offset' },
    workspace_id: { type: 'string', minLength: 1, maxLength: 200, description: 'Only this workspace and its subtree' },
  },
} as const satisfies JSONSchema;

/**
 * The search input of a validated body: each sort a field name, a leading - for descending (the
 * body's pattern has admitted only `SORT_FIELDS`, so what remains after the - is one of them).
 */
function searchInput({ sorts, ...rest }: FromSchema<typeof searchBody>): AgentSearchInput {
  if (sorts === undefined) return rest;
  return {
    ...rest,
    sorts: sorts.map((s): AgentSort => ({
      field: s.replace(/^-/, '') as AgentSort['field'],
      direction: s.startsWith('-') ? 'desc' : 'asc',
    })),
  };
}

const imageParams = {
  type: 'object',
  required: ['agent_id'],
  properties: { agent_id: { type: 'string' } },
  additionalProperties: false,
} as const;

/**
 * Whether `Accept` prefers the image (of `imageType`) to JSON: each side's quality is that of its
 * most specific matching range (the image's own type, then image wildcard, then the full wildcard;
 * application/json, then application wildcard, then the full wildcard). The image wins only with a
 * higher, non-zero quality; a tie, no Accept or an Accept naming only types we cannot produce gets
 * the JSON default.
 */
function prefersImage(accept: string | undefined, imageType: string): boolean {
  if (accept === undefined) return false;
  const quality = new Map<string, number>();
  for (const part of accept.toLowerCase().split(',')) {
    const [range = '', ...params] = part.split(';').map((p) => p.trim());
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (range !== '' && Number.isFinite(value)) quality.set(range, Math.max(quality.get(range) ?? 0, value));
  }
  const first = (...ranges: string[]) => ranges.map((r) => quality.get(r)).find((q) => q !== undefined) ?? -1;
  const image = first(imageType.toLowerCase(), 'image/*', '*/*');
  const json = first('application/json', 'application/*', '*/*');
  return image > 0 && image > json;
}

export function registerAgentRoutes(app: FastifyInstance): void {
  const api = app.withTypeProvider<JsonSchemaToTsProvider>();
  // Replies are the handlers' declared types (the response schemas serialize them); requests come typed from the schemas.
  // The items come as ready JSON text (sendJsonPage); the response schema documents them.
  api.post(
    '/agent/v1/agents/search',
    {
      config: { responseCache: true, emptyBodyIsObject: true },
      schema: {
        operationId: 'searchAgents',
        tags: ['agents'],
        summary: 'Search agents',
        querystring: noQuery,
        body: searchBody,
        response: {
          200: {
            type: 'object',
            required: ['items', 'page'],
            properties: { items: { type: 'array', items: agentSchema }, page: pageSchema },
          },
          ...problemResponses([...BODY_PROBLEMS, 'not_found']),
        },
      },
    },
    async (request, reply) => sendJsonPage(reply, await searchAgents(request.ctx, searchInput(request.body))),
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
        querystring: noQuery,
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
      if (prefersImage(request.headers.accept, image.content_type)) {
        return reply.type(image.content_type).send(Buffer.from(image.bytes));
      }
      return reply
        .type('application/json')
        .serializer((b: unknown) => b as string)
        .send(JSON.stringify(Array.from(image.bytes)));
    },
  );
}
