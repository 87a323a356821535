/** REST routes of /registry/v1 (export, users) and the insight schemas of /skill/v1. */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { exportWorkspace } from '../org/export-workspace.ts';
import { listUsers, type UserListResult } from '../org/list-users.ts';
import { listInsightSchemas, type InsightSchema } from '../skills/insight-schemas.ts';
import { exportedArtifactSchema } from '../domain/artifact-schemas.ts';
import { limitOffsetQuery, noQuery, pageSchema } from './schemas/paging.ts';
import { problemResponses } from './schemas/problems.ts';
import { directoryUserSchema, projectSchema, workspaceSchema } from './schemas/registry.ts';

const insightSchemaItem = {
  type: 'object',
  required: ['name', 'version', 'title', 'description', 'schema'],
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    schema: { type: 'object', additionalProperties: true },
  },
} as const;

const usersQuery = {
  ...limitOffsetQuery,
  properties: {
    ...limitOffsetQuery.properties,
    cursor: {
      type: 'string',
      maxLength: 512,
      description: 'The next_cursor of the previous page; not together with offset',
    },
  },
} as const;

export function registerRegistryRoutes(app: FastifyInstance): void {
  const api = app.withTypeProvider<JsonSchemaToTsProvider>();
  api.get<{ Reply: { items: readonly InsightSchema[] } }>(
    '/skill/v1/insights/schemas',
    {
      config: { responseCache: true },
      schema: {
        operationId: 'listInsightSchemas',
        tags: ['skills'],
        summary: 'Insight payload schemas (JSON Schema 2020-12)',
        querystring: noQuery,
        response: {
          200: {
            type: 'object',
            required: ['items'],
            properties: { items: { type: 'array', items: insightSchemaItem } },
          },
          ...problemResponses(['invalid_query']),
        },
      },
    },
    async () => listInsightSchemas(),
  );

  api.get(
    '/registry/v1/workspaces/:workspace_id/export',
    {
      config: { responseCache: true },
      schema: {
        operationId: 'exportWorkspace',
        tags: ['registry'],
        summary: 'Export a workspace with its subtree, projects and latest artifacts',
        params: {
          type: 'object',
          required: ['workspace_id'],
          properties: { workspace_id: { type: 'string' } },
        } as const,
        querystring: noQuery,
        response: {
          200: {
            type: 'object',
            required: ['artifacts', 'projects', 'workspaces'],
            properties: {
              artifacts: { type: 'array', items: exportedArtifactSchema },
              projects: { type: 'array', items: projectSchema },
              workspaces: { type: 'array', items: workspaceSchema },
            },
          },
          ...problemResponses(['invalid_query', 'not_found']),
        },
      },
    },
    async (request) => exportWorkspace(request.ctx, request.params.workspace_id),
  );

  api.get<{ Querystring: FromSchema<typeof usersQuery>; Reply: UserListResult }>(
    '/registry/v1/users',
    {
      config: { responseCache: true },
      schema: {
        operationId: 'listUsers',
        tags: ['registry'],
        summary: "List directory users of the caller's organization",
        querystring: usersQuery,
        response: {
          200: {
            type: 'object',
            required: ['items', 'page'],
            properties: { items: { type: 'array', items: directoryUserSchema }, page: pageSchema },
          },
          ...problemResponses(['invalid_query']),
        },
      },
    },
    async (request) => listUsers(request.ctx, request.query),
  );
}
