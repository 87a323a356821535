/**
 * The MCP server part of the registry store: published server.json versions (domain McpServerVersion).
 * Both engines implement it as part of their RegistryStore; the contract suite
 * (test/contract/mcp-server-contract.ts) runs against each.
 *
 * Invariants:
 * - a readable scope is a list of workspace ids; an empty scope reads nothing;
 * - lists are ordered by `name`, then `version` (byte order), and page by keyset (`after`);
 * - `name` and `id` each map to one server within an organization.
 */
import type { McpServerStatus, McpServerVersion } from '../domain/types.ts';

export interface McpServerQuery {
  /** Only versions held by these workspaces. */
  workspaceIds: readonly string[];
  /** Substring of `name`, ASCII letters case-insensitive; `%`, `_` and `\` are literal (the caller bounds its length). */
  search?: string;
  /** Only versions whose `updated_at` is at or after this instant (RFC 3339). */
  updatedSince?: string;
  /** Only the latest version of each name. */
  latestOnly: boolean;
  /** Include `deleted` versions (otherwise left out). */
  includeDeleted: boolean;
  /** Keyset: versions strictly after this (name, version). */
  after?: { name: string; version: string };
  limit: number;
}

/**
 * A version as the MCP Registry API lists it: the registry's own fields and the server.json as the
 * stored text, never parsed. Writers store `JSON.stringify` of the published document, which is
 * byte for byte what the response schema makes of it (its `server` takes any member, in order), so
 * the text is sent as it is.
 */
export interface ReadyMcpServerVersion extends Omit<McpServerVersion, 'server' | 'created_by' | 'updated_by'> {
  server_json: string;
}

/**
 * A version to publish; the store fills `is_latest`, `status_changed_at` and `updated_*`
 * (`updated_at` and `status_changed_at` = `published_at`; the other versions of the name whose
 * `is_latest` changes get `updated_at` = `published_at` too, when later). The store keeps
 * timestamps as ISO 8601 UTC with milliseconds (`toISOString()`).
 */
export interface NewMcpServerVersion {
  id: string;
  org_id: string;
  workspace_id: string;
  server: Record<string, unknown>;
  status: McpServerStatus;
  published_at: string;
  created_by: string;
}

/** Why a publish was refused (the transport maps each to the catalogue). */
export type PublishConflict =
  /** This name and version exist already. */
  | 'version_exists'
  /** The name (or the id) belongs to a server of another workspace of the organization. */
  | 'name_taken';

export class McpServerConflictError extends Error {
  readonly reason: PublishConflict;
  constructor(reason: PublishConflict, message: string) {
    super(message);
    this.name = 'McpServerConflictError';
    this.reason = reason;
  }
}

export interface McpServerStore {
  listMcpServerVersions(query: McpServerQuery): Promise<McpServerVersion[]>;
  /** The same list as ready versions: one statement reading only the columns the API answers. */
  listReadyMcpServerVersions(query: McpServerQuery): Promise<ReadyMcpServerVersion[]>;
  /** Every version (deleted ones included) of the server with this name in these workspaces, ordered by version. */
  getMcpServerVersionsByName(workspaceIds: readonly string[], name: string): Promise<McpServerVersion[]>;
  /** Latest versions of these ids within the organization (unknown ids ignored; one round trip). */
  getMcpServers(orgId: string, ids: readonly string[]): Promise<McpServerVersion[]>;
  /** Every version of these ids within the organization, ordered by id then `published_at`. */
  getMcpServerHistory(orgId: string, ids: readonly string[]): Promise<McpServerVersion[]>;
  /** Stores a new version and recomputes `is_latest` for its name, atomically; throws McpServerConflictError. */
  publishMcpServer(version: NewMcpServerVersion): Promise<McpServerVersion>;
}
