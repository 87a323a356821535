/**
 * The MCP Registry API v0.1 (openapi.yaml 2025-12-01 of modelcontextprotocol/registry), in a scope
 * of its own: its reads may come without credentials. A request with an `Authorization` header is
 * authenticated as everywhere and reads what its caller can read; one without reads the workspaces of
 * MCP_REGISTRY_PUBLIC_WORKSPACES (none by default: 401 token_missing, as everywhere). Reads are rate
 * limited per caller, or per client address when anonymous; publish always needs a caller. The GET
 * paths answer the CORS headers a browser-based reader needs, preflight included. Errors are the
 * service's problem+json with the specification's `error` member (schemas/mcp-registry.ts).
 */
import { baseUrlOf } from '../shared/base-url.ts';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import type { Authenticator } from '../auth/caller.ts';
import { createContext, type Services } from '../context.ts';
import { ApiError, toProblem, type ErrorCode } from '../errors.ts';
import { getServerVersion, listServers, listServerVersions } from '../mcp-servers/list-servers.ts';
import { publishServer } from '../mcp-servers/publish-server.ts';
import { anonymousReader, callerReader, type McpReader } from '../mcp-servers/reader.ts';
import { serverJsonSchema } from '../bundle/server-json-schema.ts';
import type { IngestQuotas } from '../otlp/ingest-quotas.ts';
import { rateLimitedError, type LimitedOperation, type Quota, type RateLimits } from '../rate-limits.ts';
import { checkDeadline } from '../shared/deadline.ts';
import { sendServerList, sendServerResponse } from './json-page.ts';
import { startDeadline } from './request-deadline.ts';
import {
  includeDeletedQuery,
  listServersQuery,
  publishQuery,
  serverListSchema,
  serverNameParams,
  serverResponseSchema,
  serverVersionParams,
  v01ProblemSchema,
} from './schemas/mcp-registry.ts';
import { BODY_PROBLEMS, problemResponses } from './schemas/problems.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An MCP Registry read: anonymous requests may make it when workspaces are published for them. */
    mcpRead?: boolean;
  }
  interface FastifyRequest {
    mcpReader: McpReader | null;
  }
}

export interface McpRegistryOptions {
  services: Services;
  authenticator: Authenticator;
  rateLimits: RateLimits;
  ingestQuotas: IngestQuotas;
  toApiError: (err: FastifyError | Error) => ApiError;
}

/** The largest server.json a publish takes: every list answer carries up to 100 of them. */
const PUBLISH_BODY_LIMIT = 32 * 1024;

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type, Traceparent',
  'access-control-expose-headers': 'RateLimit, RateLimit-Policy, Retry-After, Traceparent',
  'access-control-max-age': '86400',
};

const READ_PROBLEMS: ErrorCode[] = ['invalid_query', 'invalid_request', 'not_found', 'rate_limited'];
const readProblems = problemResponses(READ_PROBLEMS, v01ProblemSchema);
const security = [{ bearer: [] }, {}];

/** `packages/0/version` -> `body.packages[0].version`, as the official registry locates a field. */
function location(pointer: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  return parts.reduce((at, p) => (/^\d+$/.test(p) ? `${at}[${p}]` : `${at}.${p}`), 'body');
}

function v01Problem(err: ApiError, traceId: string) {
  const body = toProblem(err, traceId);
  return {
    ...body,
    error: body.detail,
    ...(body.errors !== undefined
      ? { errors: body.errors.map((e) => ({ ...e, message: e.detail, location: location(e.field) })) }
      : {}),
  };
}

function setQuotaHeaders(reply: FastifyReply, quota: Quota, policy: string): void {
  reply.header('ratelimit-policy', `"${policy}";q=${quota.limit};w=${quota.windowS}`);
  reply.header('ratelimit', `"${policy}";r=${quota.remaining};t=${quota.resetS}`);
  if (quota.exceeded) throw rateLimitedError(quota);
}

export async function registerMcpRegistryRoutes(app: FastifyInstance, options: McpRegistryOptions): Promise<void> {
  const { services, authenticator, rateLimits, ingestQuotas } = options;
  const publicWorkspaces = services.config.mcpRegistryPublicWorkspaces;
  await app.register(async (scope) => {
    scope.decorateRequest('mcpReader', null);
    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.method === 'OPTIONS') return;
      const deadline = startDeadline(request, reply, services.config.requestTimeoutMs);
      const read = request.routeOptions.config.mcpRead === true;
      const operation: LimitedOperation = read ? 'mcp_registry.read' : 'mcp_registry.publish';
      if (read && request.headers.authorization === undefined && publicWorkspaces.length > 0) {
        const base = {
          registry: services.registry,
          traces: services.traces,
          signal: deadline.signal,
          checkDeadline: () => checkDeadline(deadline),
        };
        request.mcpReader = anonymousReader(base, publicWorkspaces);
        setQuotaHeaders(reply, await rateLimits.spendByAddress(request.ip, operation), 'per-address');
        return;
      }
      const caller = await authenticator.authenticate(request.headers.authorization);
      const baseUrl = () => baseUrlOf(services.config.publicBaseUrl, request.headers.host);
      request.ctx = createContext(services, caller, request.id, deadline, rateLimits, ingestQuotas, baseUrl);
      request.mcpReader = callerReader(request.ctx);
      setQuotaHeaders(reply, await request.ctx.spendQuota(operation), 'per-caller');
    });
    scope.addHook('onSend', async (request, reply, payload) => {
      if (request.routeOptions.config.mcpRead === true || request.method === 'OPTIONS') reply.headers(CORS);
      return payload;
    });
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      const apiErr = options.toApiError(err);
      if (apiErr.status >= 500) request.log.error({ err }, 'request failed');
      if (apiErr.extras.retryAfter !== undefined) reply.header('retry-after', String(apiErr.extras.retryAfter));
      return reply.code(apiErr.status).type('application/problem+json').send(v01Problem(apiErr, request.id));
    });
    registerRoutes(scope);
  });
}

const reader = (request: FastifyRequest) => request.mcpReader as McpReader;

function registerRoutes(scope: FastifyInstance): void {
  const api = scope.withTypeProvider<JsonSchemaToTsProvider>();
  const preflight = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(204).send();
  for (const path of [
    '/v0.1/servers',
    '/v0.1/servers/:serverName/versions',
    '/v0.1/servers/:serverName/versions/:version',
  ])
    api.options(path, { schema: { hide: true } }, preflight);

  // Reads answer JSON text (mcp-servers/present.ts, json-page.ts); the response schemas document it.
  api.get<{ Querystring: FromSchema<typeof listServersQuery> }>(
    '/v0.1/servers',
    {
      config: { mcpRead: true },
      schema: {
        operationId: 'mcpListServers',
        tags: ['mcp-registry'],
        summary: 'List MCP servers (MCP Registry API v0.1)',
        security,
        querystring: listServersQuery,
        response: { 200: serverListSchema, ...readProblems },
      },
    },
    async (request, reply) => sendServerList(reply, await listServers(reader(request), request.query)),
  );

  api.get<{ Params: FromSchema<typeof serverNameParams>; Querystring: FromSchema<typeof includeDeletedQuery> }>(
    '/v0.1/servers/:serverName/versions',
    {
      config: { mcpRead: true },
      schema: {
        operationId: 'mcpListServerVersions',
        tags: ['mcp-registry'],
        summary: 'Every version of an MCP server, the latest published first',
        security,
        params: serverNameParams,
        querystring: includeDeletedQuery,
        response: { 200: serverListSchema, ...readProblems },
      },
    },
    async (request, reply) =>
      sendServerList(
        reply,
        await listServerVersions(reader(request), request.params.serverName, request.query.include_deleted),
      ),
  );

  api.get<{ Params: FromSchema<typeof serverVersionParams>; Querystring: FromSchema<typeof includeDeletedQuery> }>(
    '/v0.1/servers/:serverName/versions/:version',
    {
      config: { mcpRead: true },
      schema: {
        operationId: 'mcpGetServerVersion',
        tags: ['mcp-registry'],
        summary: 'One version of an MCP server (`latest`: the latest)',
        security,
        params: serverVersionParams,
        querystring: includeDeletedQuery,
        response: { 200: serverResponseSchema, ...readProblems },
      },
    },
    async (request, reply) =>
      sendServerResponse(
        reply,
        await getServerVersion(
          reader(request),
          request.params.serverName,
          request.params.version,
          request.query.include_deleted,
        ),
      ),
  );

  // The body's type is the handler's: FromSchema cannot read this schema's depth.
  api.post<{ Querystring: FromSchema<typeof publishQuery>; Body: Record<string, unknown> }>(
    '/v0.1/publish',
    {
      bodyLimit: PUBLISH_BODY_LIMIT,
      schema: {
        operationId: 'mcpPublishServer',
        tags: ['mcp-registry'],
        summary: 'Publish a version of an MCP server from its server.json',
        querystring: publishQuery,
        body: serverJsonSchema,
        response: {
          200: serverResponseSchema,
          ...problemResponses(
            [...BODY_PROBLEMS, 'not_found', 'name_taken', 'version_exists', 'rate_limited'],
            v01ProblemSchema,
          ),
        },
      },
    },
    async (request) => {
      const header = request.headers['x-workspace-id'];
      const fromHeader = typeof header === 'string' && header !== '' ? header : undefined;
      const fromQuery = request.query.workspace_id;
      if (fromHeader !== undefined && fromQuery !== undefined && fromHeader !== fromQuery)
        throw new ApiError('invalid_query', 'workspace_id and X-Workspace-Id differ');
      const workspaceId = fromQuery ?? fromHeader;
      return publishServer(request.ctx, {
        server: request.body,
        ...(workspaceId !== undefined ? { workspaceId } : {}),
        ...(request.query.server_id !== undefined ? { serverId: request.query.server_id } : {}),
      });
    },
  );
}
