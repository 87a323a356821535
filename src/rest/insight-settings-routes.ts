/**
 * A workspace's insight detection settings over REST: read by anyone who reads the workspace,
 * replaced by its admins (src/insights/workspace-settings.ts).
 */
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance } from 'fastify';
import { getWorkspaceSettings, setWorkspaceSettings, settingsBodySchema } from '../insights/workspace-settings.ts';
import { noQuery } from './schemas/paging.ts';
import { BODY_PROBLEMS, problemResponses } from './schemas/problems.ts';

const params = {
  type: 'object',
  required: ['workspace_id'],
  properties: { workspace_id: { type: 'string' } },
} as const;

const settingsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['workspace_id', 'settings'],
  properties: {
    workspace_id: { type: 'string' },
    settings: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'value', 'overridden', 'default', 'minimum', 'maximum', 'integer', 'description'],
        properties: {
          name: { type: 'string' },
          value: { type: 'number', description: 'What detection uses in this workspace' },
          overridden: { type: 'boolean', description: "Whether value is this workspace's own" },
          default: { type: 'number' },
          minimum: { type: 'number' },
          maximum: { type: 'number' },
          integer: { type: 'boolean' },
          one_of: { type: 'array', items: { type: 'number' } },
          description: { type: 'string' },
        },
      },
    },
  },
} as const;

export function registerInsightSettingsRoutes(app: FastifyInstance): void {
  const api = app.withTypeProvider<JsonSchemaToTsProvider>();
  const path = '/skill/v1/workspaces/:workspace_id/insight-settings';
  api.get(
    path,
    {
      schema: {
        operationId: 'getInsightSettings',
        tags: ['skills'],
        summary: "A workspace's insight detection settings: each with its default, range and the value used",
        params,
        querystring: noQuery,
        response: { 200: settingsSchema, ...problemResponses(['invalid_query', 'not_found']) },
      },
    },
    async (request) => getWorkspaceSettings(request.ctx, request.params.workspace_id),
  );
  api.put(
    path,
    {
      schema: {
        operationId: 'setInsightSettings',
        tags: ['skills'],
        summary: "Replace a workspace's insight detection overrides (workspace admins)",
        params,
        querystring: noQuery,
        body: settingsBodySchema,
        response: { 200: settingsSchema, ...problemResponses([...BODY_PROBLEMS, 'not_found']) },
      },
    },
    async (request) => setWorkspaceSettings(request.ctx, request.params.workspace_id, request.body.overrides),
  );
}
