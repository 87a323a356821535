/**
 * What both registry engines share for MCP servers (mcp-server-port.ts): the row mapping, the
 * list's SQL conditions, the rule that picks a name's latest version, and the checks of a publish
 * made on the rows the engine read in its transaction.
 */
import semver from 'semver';
import type { McpServerEntry, McpServerStatus, McpServerVersion } from '../domain/types.ts';
import {
  McpServerConflictError,
  type McpServerQuery,
  type NewMcpServerVersion,
  type ReadyMcpServerVersion,
} from './mcp-server-port.ts';
import type { Row } from './sql-rows.ts';
import { likeEscape } from './sql-text.ts';

export const MCP_SERVER_COLUMNS =
  'org_id, id, version, name, workspace_id, server_json, status, is_latest, published_at, updated_at, status_changed_at, created_by, updated_by';

/** What a ready version reads (ReadyMcpServerVersion): the document's text, not who wrote it. */
export const READY_MCP_SERVER_COLUMNS =
  'org_id, id, version, name, workspace_id, server_json, status, is_latest, published_at, updated_at, status_changed_at';

/** A row of READY_MCP_SERVER_COLUMNS read as an array, in that order. */
export function readyMcpServerOfArray(r: unknown[]): ReadyMcpServerVersion {
  return {
    org_id: r[0] as string,
    id: r[1] as string,
    version: r[2] as string,
    name: r[3] as string,
    workspace_id: r[4] as string,
    server_json: r[5] as string,
    status: r[6] as McpServerStatus,
    is_latest: r[7] === true || Number(r[7]) === 1,
    published_at: r[8] as string,
    updated_at: r[9] as string,
    status_changed_at: r[10] as string,
  };
}

export function toReadyMcpServerVersion(r: Row): ReadyMcpServerVersion {
  return {
    id: r.id as string,
    org_id: r.org_id as string,
    workspace_id: r.workspace_id as string,
    name: r.name as string,
    version: r.version as string,
    server_json: r.server_json as string,
    status: r.status as McpServerStatus,
    is_latest: r.is_latest === true || Number(r.is_latest) === 1,
    published_at: r.published_at as string,
    updated_at: r.updated_at as string,
    status_changed_at: r.status_changed_at as string,
  };
}

export function toMcpServerVersion(r: Row): McpServerVersion {
  const { server_json, ...ready } = toReadyMcpServerVersion(r);
  return {
    ...ready,
    server: JSON.parse(server_json) as Record<string, unknown>,
    created_by: r.created_by as string,
    updated_by: r.updated_by as string,
  };
}

/** An RFC 3339 instant as the stored text (ISO 8601 UTC, milliseconds), whose text order is time order. */
export function storedInstant(value: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`not an RFC 3339 date-time: ${value}`);
  return new Date(ms).toISOString();
}

/** `server.name` and `server.version` of a document to store (the caller validated it against the schema). */
export function nameAndVersion(server: Record<string, unknown>): { name: string; version: string } {
  const { name, version } = server;
  if (typeof name !== 'string' || typeof version !== 'string' || name === '' || version === '')
    throw new TypeError('a server.json document needs a string name and version');
  return { name, version };
}

/**
 * The WHERE conditions of a list (after the workspace scope, bound first by the engine), with
 * `p(i)` writing the engine's i-th placeholder (counted from `first`), and their values.
 */
export function mcpListConditions(
  query: McpServerQuery,
  p: (i: number) => string,
  first: number,
): { where: string; params: (string | number)[] } {
  const conditions: string[] = [];
  const params: (string | number)[] = [];
  const next = (v: string | number) => {
    params.push(v);
    return p(first + params.length - 1);
  };
  if (query.latestOnly) conditions.push('is_latest');
  if (!query.includeDeleted) conditions.push("status <> 'deleted'");
  if (query.search !== undefined && query.search !== '')
    conditions.push(`lower(name) LIKE lower(${next(`%${likeEscape(query.search)}%`)}) ESCAPE '\\'`);
  if (query.updatedSince !== undefined) conditions.push(`updated_at >= ${next(storedInstant(query.updatedSince))}`);
  if (query.after !== undefined) {
    const { name, version } = query.after;
    conditions.push(`(name > ${next(name)} OR (name = ${next(name)} AND version > ${next(version)}))`);
  }
  return { where: conditions.map((c) => ` AND ${c}`).join(''), params };
}

/** A stored version of a name, as the latest rule reads it. */
export interface VersionOrder {
  version: string;
  status: string;
  published_at: string;
}

/**
 * The latest version of a name: the semver-greatest non-deleted version; when any non-deleted
 * version is not valid semver, the last published one (ties: the greater version text). Null when
 * every version is deleted.
 */
export function latestVersion(versions: readonly VersionOrder[]): string | null {
  const live = versions.filter((v) => v.status !== 'deleted');
  if (live.length === 0) return null;
  const bytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const allSemver = live.every((v) => semver.valid(v.version) !== null);
  const sorted = [...live].sort((a, b) =>
    allSemver
      ? semver.compare(a.version, b.version) || bytes(a.published_at, b.published_at) || bytes(a.version, b.version)
      : bytes(a.published_at, b.published_at) || bytes(a.version, b.version),
  );
  return sorted[sorted.length - 1]?.version ?? null;
}

/** A stored version of the organization that shares the name or the id of a version to write. */
export interface Neighbour {
  id: string;
  name: string;
  version: string;
  workspace_id: string;
}

/** Throws the conflict a publish of `v` (named `name`@`version`) meets among these stored versions, if any. */
export function checkPublish(v: NewMcpServerVersion, name: string, version: string, stored: readonly Neighbour[]) {
  for (const s of stored) {
    if (s.name === name && s.version === version)
      throw new McpServerConflictError('version_exists', `${name} version ${version} is published already`);
  }
  for (const s of stored) {
    if (s.workspace_id !== v.workspace_id)
      throw new McpServerConflictError('name_taken', `${name} or ${v.id} belongs to another workspace`);
    if (s.name !== name)
      throw new McpServerConflictError('name_taken', `the server ${v.id} is named ${s.name}, not ${name}`);
    if (s.id !== v.id) throw new McpServerConflictError('name_taken', `${name} is the name of the server ${s.id}`);
  }
}

/**
 * Throws `name_taken` when the stored versions of an imported entry's organization give its id
 * another name or its name another id; returns whether its version is stored already.
 */
export function checkImport(e: McpServerEntry, name: string, version: string, stored: readonly Neighbour[]): boolean {
  for (const s of stored) {
    if (s.id !== e.id)
      throw new McpServerConflictError('name_taken', `MCP server ${e.id}: ${name} is the name of the server ${s.id}`);
    if (s.name !== name)
      throw new McpServerConflictError('name_taken', `MCP server ${e.id}: it is named ${s.name}, not ${name}`);
  }
  return stored.some((s) => s.version === version);
}
