/**
 * A stored MCP server version as the MCP Registry API answers it (openapi.yaml 2025-12-01,
 * `ServerResponse`): the `server.json` as published, unchanged, and `_meta` with the registry's
 * official metadata and this gateway's own namespace (the server's id, its workspace, and its usage
 * from telemetry when the trace store answered). Reads answer JSON text built from the stored
 * server.json text (ReadyMcpServerVersion), byte for byte what the response schema makes of
 * `toServerResponse`; the publish answer is that object.
 */
import type { McpServerVersion } from '../domain/types.ts';
import { ApiError } from '../errors.ts';
import type { ReadyMcpServerVersion } from '../store/mcp-server-port.ts';
import { usageInScope, usageJson, type McpServerUsage } from './usage.ts';
import type { McpReader } from './reader.ts';

const OFFICIAL_META = 'io.modelcontextprotocol.registry/official';
export const GATEWAY_META = 'dev.agent-registry.gateway/registry';

export interface ServerResponse {
  server: Record<string, unknown>;
  _meta: {
    [OFFICIAL_META]: {
      status: McpServerVersion['status'];
      statusChangedAt: string;
      publishedAt: string;
      updatedAt: string;
      isLatest: boolean;
    };
    [GATEWAY_META]: { server_id: string; workspace_id: string; usage?: McpServerUsage };
  };
}

/** A ServerResponse as JSON text (`serverResponseJson`): a list is answered by joining them. */
export type ServerResponseJson = string;

export interface ServerList {
  servers: ServerResponseJson[];
  /** `nextCursor` is absent on the last page (never null: some clients break on it). */
  metadata: { nextCursor?: string; count: number };
}

export function toServerResponse(v: McpServerVersion, usage: McpServerUsage | undefined): ServerResponse {
  return {
    server: v.server,
    _meta: {
      [OFFICIAL_META]: {
        status: v.status,
        statusChangedAt: v.status_changed_at,
        publishedAt: v.published_at,
        updatedAt: v.updated_at,
        isLatest: v.is_latest,
      },
      [GATEWAY_META]: {
        server_id: v.id,
        workspace_id: v.workspace_id,
        ...(usage !== undefined ? { usage } : {}),
      },
    },
  };
}

/** A version read with its document parsed, as a ready one: its text is what writers store. */
export function readyVersion(v: McpServerVersion): ReadyMcpServerVersion {
  const { server, created_by: _createdBy, updated_by: _updatedBy, ...fields } = v;
  return { ...fields, server_json: JSON.stringify(server) };
}

/** Text that JSON.stringify writes as it is between quotes: printable ASCII but `"` and `\`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** JSON.stringify of `text`, without its call for the plain text ids and instants are. */
const quote = (text: string): string => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text));

/**
 * `toServerResponse` as the response schema serializes it: members in the schema's order, strings
 * as JSON.stringify writes them, the stored server.json text as it is.
 */
export function serverResponseJson(v: ReadyMcpServerVersion, usage: string | undefined): ServerResponseJson {
  return `{"server":${v.server_json},"_meta":{"${OFFICIAL_META}":{"status":${quote(v.status)},"statusChangedAt":${quote(v.status_changed_at)},"publishedAt":${quote(v.published_at)},"updatedAt":${quote(v.updated_at)},"isLatest":${v.is_latest ? 'true' : 'false'}},"${GATEWAY_META}":{"server_id":${quote(v.id)},"workspace_id":${quote(v.workspace_id)}${usage === undefined ? '' : `,"usage":${usage}`}}}}`;
}

/**
 * The usage of the servers of these versions, counted over the reader's workspaces, by
 * organization and id: one trace-store query per organization among them (a caller's are all of
 * one). Null when the trace store cannot answer: the answer then leaves usage out rather than failing.
 */
async function usageOfVersions(
  reader: McpReader,
  versions: readonly ReadyMcpServerVersion[],
): Promise<Map<string, Map<string, McpServerUsage>> | null> {
  const idsByOrg = new Map<string, Set<string>>();
  for (const v of versions) idsByOrg.set(v.org_id, (idsByOrg.get(v.org_id) ?? new Set()).add(v.id));
  const workspaceIds = await reader.readable();
  const usage = new Map<string, Map<string, McpServerUsage>>();
  try {
    for (const [orgId, ids] of idsByOrg)
      usage.set(orgId, await usageInScope(reader, { orgId, workspaceIds }, [...ids]));
  } catch (err) {
    if (err instanceof ApiError && err.code === 'traces_unavailable') return null;
    throw err;
  }
  return usage;
}

/** The answer for these versions as JSON text, each with its server's usage (when known). */
export async function presentVersions(
  reader: McpReader,
  versions: readonly ReadyMcpServerVersion[],
): Promise<ServerResponseJson[]> {
  const usage = await usageOfVersions(reader, versions);
  // Strings skip the deadline check before serializing (rest/request-deadline.ts): this is the last step.
  reader.checkDeadline();
  return versions.map((v) => {
    const u = usage?.get(v.org_id)?.get(v.id);
    return serverResponseJson(v, u === undefined ? undefined : usageJson(u));
  });
}
