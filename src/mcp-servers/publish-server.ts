/**
 * `POST /v0.1/publish` (openapi.yaml 2025-12-01): a caller with `can_create_content` on the target
 * workspace stores a new version of a server from its `server.json`. The transport checked the
 * document against the server.json schema; here are the rules the schema cannot say, those of the
 * official registry's validation: a supported `$schema`, a specific version (not `latest`, not a
 * range), publisher metadata of at most 4 KiB.
 *
 * Which server a document is a version of:
 * - its `name` is already a server of the organization: that server (its id and its workspace; a
 *   different `workspace_id` or `server_id` is 409 name_taken);
 * - else a new server in the named workspace (a service account's own by default), with the id given
 *   as `server_id`, or else the part of the name after the slash (`io.github.acme/weather` ->
 *   `weather`), which is what MCP clients usually report as `mcp.server.name`.
 */
import type { RequestContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { McpServerConflictError } from '../store/mcp-server-port.ts';
import { MAX_VERSIONS } from './list-servers.ts';
import { toServerResponse, type ServerResponse } from './present.ts';
import { SERVER_SCHEMA_VERSIONS, schemaUrlOf } from '../bundle/server-json-schema.ts';
import { mcpServerUsage } from './usage.ts';

export interface PublishInput {
  /** The server.json document (shape checked by the transport). */
  server: Record<string, unknown>;
  /** The target workspace (query parameter or header). */
  workspaceId?: string;
  /** The id of a new server. */
  serverId?: string;
}

const SUPPORTED_SCHEMAS = new Set<string>(SERVER_SCHEMA_VERSIONS.map(schemaUrlOf));
const PUBLISHER_META = 'io.modelcontextprotocol.registry/publisher-provided';
const MAX_PUBLISHER_META_BYTES = 4096;

/** What the official registry refuses as a version: `latest`, and anything that reads as a range. */
function looksLikeRange(version: string): boolean {
  const v = version.trim();
  if (v === 'latest') return true;
  if (/^(\^|~|>=?|<=?|=)\s*v?\d/.test(v) || v.includes('||') || /\d\s+-\s+v?\d/.test(v)) return true;
  return /^v?(\d+|[xX*])(\.(\d+|[xX*])){1,2}(-[0-9A-Za-z.-]+)?$/.test(v) && /[xX*]/.test(v);
}

/** The document's name, once the rules hold. */
function checkDocument(server: Record<string, unknown>): string {
  const schema = server.$schema;
  if (typeof schema !== 'string')
    throw new ApiError('invalid_field', `$schema is required (${schemaUrlOf('2025-12-11')})`, { field: '/$schema' });
  if (!SUPPORTED_SCHEMAS.has(schema))
    throw new ApiError('invalid_field', `$schema ${schema} is not supported; use ${schemaUrlOf('2025-12-11')}`, {
      field: '/$schema',
    });
  const { name, version } = server as { name: string; version: string };
  if (version.trim() === '' || version !== version.trim())
    throw new ApiError('invalid_field', 'version must be a version, without white space around it', {
      field: '/version',
    });
  if (looksLikeRange(version))
    throw new ApiError('invalid_field', 'version must be one specific version, not latest or a range', {
      field: '/version',
    });
  const packages = Array.isArray(server.packages) ? (server.packages as { version?: unknown }[]) : [];
  for (const [i, p] of packages.entries())
    if (typeof p.version === 'string' && looksLikeRange(p.version))
      throw new ApiError('invalid_field', 'a package version must be one specific version, not a range', {
        field: `/packages/${i}/version`,
      });
  const meta = (server._meta as Record<string, unknown> | undefined)?.[PUBLISHER_META];
  if (meta !== undefined && Buffer.byteLength(JSON.stringify(meta)) > MAX_PUBLISHER_META_BYTES)
    throw new ApiError(
      'invalid_field',
      `publisher-provided metadata is larger than ${MAX_PUBLISHER_META_BYTES} bytes`,
      {
        field: `/_meta/${PUBLISHER_META.replaceAll('/', '~1')}`,
      },
    );
  return name;
}

export async function publishServer(ctx: RequestContext, input: PublishInput): Promise<ServerResponse> {
  const name = checkDocument(input.server);
  const access = await ctx.access();
  const existing = await ctx.registry.getMcpServerVersionsByName(access.discoverableWorkspaceIds(), name);
  const held = existing[0];
  const caller = ctx.caller;
  const workspaceId =
    input.workspaceId ?? held?.workspace_id ?? (caller.kind === 'service_account' ? caller.workspaceId : undefined);
  if (workspaceId === undefined)
    throw new ApiError('invalid_query', 'name the target workspace: query parameter workspace_id or X-Workspace-Id');
  if (!access.canDiscover(workspaceId)) throw new ApiError('not_found', `workspace ${workspaceId} not found`);
  if (!access.canCreateContent(workspaceId))
    throw new ApiError(
      'access_denied',
      // The workspace of an existing server is not named to a caller who did not name it.
      input.workspaceId !== undefined
        ? `no permission to publish to workspace ${workspaceId}`
        : `no permission to publish versions of ${name}`,
    );
  if (held !== undefined && held.workspace_id !== workspaceId)
    throw new ApiError('name_taken', `${name} is a server of another workspace`);
  if (held !== undefined && input.serverId !== undefined && input.serverId !== held.id)
    throw new ApiError('name_taken', `${name} is the server ${held.id}`);
  if (existing.length >= MAX_VERSIONS)
    throw new ApiError('invalid_request', `a server has at most ${MAX_VERSIONS} versions`);
  const id = held?.id ?? input.serverId ?? name.slice(name.indexOf('/') + 1);
  const stored = await ctx
    .write(() =>
      ctx.registry.publishMcpServer({
        id,
        org_id: caller.orgId,
        workspace_id: workspaceId,
        server: input.server,
        status: 'active',
        published_at: new Date().toISOString(),
        created_by: caller.kind === 'user' ? caller.userId : caller.agentId,
      }),
    )
    .catch((err: unknown) => {
      if (!(err instanceof McpServerConflictError)) throw err;
      const hint = held === undefined && input.serverId === undefined ? '; choose an id with server_id' : '';
      throw new ApiError(err.reason, `${err.message}${hint}`);
    });
  // The version is stored: usage is a bonus from here, never a failure.
  const usage = await mcpServerUsage(ctx, [stored.id]).catch(() => null);
  return toServerResponse(stored, usage?.get(stored.id));
}
