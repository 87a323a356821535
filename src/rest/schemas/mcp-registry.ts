/**
 * JSON Schemas of the MCP Registry API v0.1 routes (openapi.yaml 2025-12-01 of
 * modelcontextprotocol/registry): query strings, the `ServerResponse` and `ServerList` answers, and
 * the error body. Inline on purpose: a schema added with `addSchema` in a scope changes the
 * validators of the whole scope.
 */
import { problemSchema } from './problems.ts';

const name = { type: 'string', minLength: 1, maxLength: 200 } as const;

export const listServersQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cursor: { type: 'string', minLength: 1, maxLength: 1000, description: 'metadata.nextCursor of the previous page' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 30, description: 'Servers per page' },
    search: { type: 'string', maxLength: 200, description: 'Substring of the name (ASCII letters case-insensitive)' },
    updated_since: { type: 'string', maxLength: 64, description: 'RFC 3339 date-time; includes deleted versions' },
    version: { type: 'string', minLength: 1, maxLength: 255, description: '`latest`, or one exact version' },
    include_deleted: { type: 'boolean', description: 'Default false (true with updated_since)' },
  },
} as const;

export const includeDeletedQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { include_deleted: { type: 'boolean', default: false } },
} as const;

export const publishQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    workspace_id: { ...name, description: 'Target workspace (or the X-Workspace-Id header)' },
    server_id: {
      type: 'string',
      pattern: '^[A-Za-z0-9._-]{1,200}$',
      description: 'Id of a new server (default: the name after its slash)',
    },
  },
} as const;

export const serverNameParams = {
  type: 'object',
  required: ['serverName'],
  properties: { serverName: { type: 'string', description: 'URL-encoded name, e.g. io.github.acme%2Fweather' } },
} as const;

export const serverVersionParams = {
  type: 'object',
  required: ['serverName', 'version'],
  properties: {
    ...serverNameParams.properties,
    version: { type: 'string', description: 'URL-encoded version, or `latest`' },
  },
} as const;

const usage = {
  type: 'object',
  required: ['window_days', 'calls', 'error_rate', 'p95_latency_ms'],
  properties: {
    window_days: { type: 'integer' },
    calls: { type: 'integer' },
    error_rate: { type: ['number', 'null'] },
    p95_latency_ms: { type: ['number', 'null'] },
  },
} as const;

export const serverResponseSchema = {
  type: 'object',
  required: ['server', '_meta'],
  properties: {
    server: {
      type: 'object',
      additionalProperties: true,
      description: 'The server.json as published (MCP Registry server.schema.json 2025-12-11)',
    },
    _meta: {
      type: 'object',
      additionalProperties: true,
      properties: {
        'io.modelcontextprotocol.registry/official': {
          type: 'object',
          required: ['status', 'statusChangedAt', 'publishedAt', 'updatedAt', 'isLatest'],
          properties: {
            status: { type: 'string', enum: ['active', 'deprecated', 'deleted'] },
            statusChangedAt: { type: 'string', format: 'date-time' },
            publishedAt: { type: 'string', format: 'date-time' },
            updatedAt: { type: 'string', format: 'date-time' },
            isLatest: { type: 'boolean' },
          },
        },
        'dev.agent-registry.gateway/registry': {
          type: 'object',
          required: ['server_id', 'workspace_id'],
          description: "This gateway's namespace; usage (30 days of telemetry) is absent when the trace store is down",
          properties: { server_id: { type: 'string' }, workspace_id: { type: 'string' }, usage },
        },
      },
    },
  },
} as const;

export const serverListSchema = {
  type: 'object',
  required: ['servers', 'metadata'],
  properties: {
    servers: { type: 'array', items: serverResponseSchema },
    metadata: {
      type: 'object',
      required: ['count'],
      properties: {
        nextCursor: { type: 'string', description: 'Absent on the last page' },
        count: { type: 'integer' },
      },
    },
  },
} as const;

/**
 * The error body of these routes: the service's problem (whose `title`, `status`, `detail` are those
 * of the official registry's problem+json, and `code` one of the catalogue), with the specification's
 * `error` (the detail) and, per invalid field, the official registry's `message` and `location`.
 */
export const v01ProblemSchema = {
  type: 'object',
  description: problemSchema.description,
  required: [...problemSchema.required, 'error'],
  properties: {
    ...problemSchema.properties,
    error: { type: 'string', description: 'The detail, as the specification’s `{error}` body' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'detail', 'message', 'location'],
        properties: {
          field: { type: 'string' },
          detail: { type: 'string' },
          message: { type: 'string' },
          location: { type: 'string', description: 'e.g. body.packages[0].version' },
        },
      },
    },
  },
} as const;
