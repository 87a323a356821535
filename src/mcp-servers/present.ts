/**
 * A stored MCP server version as the MCP Registry API answers it (openapi.yaml 2025-12-01,
 * `ServerResponse`): the `server.json` as published, unchanged, and `_meta` with the registry's
 * official metadata and this gateway's own namespace (the server's id, its workspace, and its usage
 * from telemetry when the trace store answered).
 */
import type { McpServerVersion } from '../domain/types.ts';
import { ApiError } from '../errors.ts';
import { usageInScope, type McpServerUsage } from './usage.ts';
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

export interface ServerList {
  servers: ServerResponse[];
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

/**
 * The usage of the servers of these versions, counted over the reader's workspaces: one trace-store
 * query per organization among them (a caller's are all of one). Null when the trace store cannot
 * answer: the answer then leaves usage out rather than failing.
 */
async function usageOfVersions(
  reader: McpReader,
  versions: readonly McpServerVersion[],
): Promise<Map<string, McpServerUsage> | null> {
  const idsByOrg = new Map<string, Set<string>>();
  for (const v of versions) idsByOrg.set(v.org_id, (idsByOrg.get(v.org_id) ?? new Set()).add(v.id));
  const workspaceIds = await reader.readable();
  const usage = new Map<string, McpServerUsage>();
  try {
    for (const [orgId, ids] of idsByOrg)
      for (const [id, u] of await usageInScope(reader, { orgId, workspaceIds }, [...ids]))
        usage.set(`${orgId}\n${id}`, u);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'traces_unavailable') return null;
    throw err;
  }
  return usage;
}

/** The answer for these versions, each with its server's usage (when known). */
export async function presentVersions(
  reader: McpReader,
  versions: readonly McpServerVersion[],
): Promise<ServerResponse[]> {
  const usage = await usageOfVersions(reader, versions);
  return versions.map((v) => toServerResponse(v, usage?.get(`${v.org_id}\n${v.id}`)));
}
