/**
 * The reads of the MCP Registry API v0.1 (openapi.yaml 2025-12-01): the server list, a server's
 * versions, and one version (`latest` included). Names and versions arrive decoded; the transport
 * bounds every parameter. Lists are ordered by name, then version, and page by an opaque cursor (the
 * last answered name and version), so paging sees every version once whatever is published meanwhile.
 */
import type { McpServerVersion } from '../domain/types.ts';
import { ApiError } from '../errors.ts';
import type { McpServerQuery, ReadyMcpServerVersion } from '../store/mcp-server-port.ts';
import { presentVersions, readyVersion, type ServerList, type ServerResponseJson } from './present.ts';
import type { McpReader } from './reader.ts';

export interface ListServersInput {
  cursor?: string;
  /** 1 to 100. */
  limit: number;
  search?: string;
  /** RFC 3339; implies deleted versions unless `include_deleted` says otherwise. */
  updated_since?: string;
  /** `latest`, or one exact version. */
  version?: string;
  include_deleted?: boolean;
}

/**
 * The most versions a server has (its versions answer is one page); a publish past it is refused.
 * With documents of up to 32 KiB, one versions answer stays within about 3 MB.
 */
export const MAX_VERSIONS = 100;
/** Versions an exact-`version` list reads at most per request before answering with a cursor. */
const VERSION_SCAN = 5000;
const SCAN_BATCH = 500;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function badCursor(): ApiError {
  return new ApiError('invalid_query', 'query parameter cursor is not a cursor of this list');
}

function encodeCursor(v: ReadyMcpServerVersion): string {
  return Buffer.from(JSON.stringify([v.name, v.version])).toString('base64url');
}

function decodeCursor(cursor: string): { name: string; version: string } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(value) || value.length !== 2) throw badCursor();
  const [name, version] = value as unknown[];
  if (typeof name !== 'string' || typeof version !== 'string' || name === '' || version === '') throw badCursor();
  return { name, version };
}

/** The date part names a real day (Date.parse rolls 2026-02-30 over to March 2). */
function isCalendarDate(value: string): boolean {
  const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d;
}

function updatedSince(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value)) || !isCalendarDate(value))
    throw new ApiError('invalid_query', 'query parameter updated_since must be an RFC 3339 date-time');
  return value;
}

export async function listServers(reader: McpReader, input: ListServersInput): Promise<ServerList> {
  const since = updatedSince(input.updated_since);
  const query: Omit<McpServerQuery, 'limit'> = {
    workspaceIds: await reader.readable(),
    latestOnly: input.version === 'latest',
    includeDeleted: input.include_deleted ?? since !== undefined,
    ...(input.search !== undefined && input.search !== '' ? { search: input.search } : {}),
    ...(since !== undefined ? { updatedSince: since } : {}),
    ...(input.cursor !== undefined ? { after: decodeCursor(input.cursor) } : {}),
  };
  const exact = input.version !== undefined && input.version !== 'latest' ? input.version : undefined;
  const { page, next } =
    exact === undefined ? await onePage(reader, query, input.limit) : await scanFor(reader, query, input.limit, exact);
  reader.checkDeadline();
  return {
    servers: await presentVersions(reader, page),
    metadata: { ...(next !== undefined ? { nextCursor: encodeCursor(next) } : {}), count: page.length },
  };
}

/** A page, and the version the next page starts after (none on the last page). */
interface Page {
  page: ReadyMcpServerVersion[];
  next: ReadyMcpServerVersion | undefined;
}

async function onePage(reader: McpReader, query: Omit<McpServerQuery, 'limit'>, limit: number): Promise<Page> {
  const rows = await reader.registry.listReadyMcpServerVersions({ ...query, limit: limit + 1 });
  const page = rows.slice(0, limit);
  return { page, next: rows.length > limit ? page[page.length - 1] : undefined };
}

/**
 * The versions equal to `version`, read in batches from the cursor: at most VERSION_SCAN versions per
 * request, so that a rare version answers a short (even empty) page with a cursor after the last
 * version read rather than reading every stored version.
 */
async function scanFor(
  reader: McpReader,
  query: Omit<McpServerQuery, 'limit'>,
  limit: number,
  version: string,
): Promise<Page> {
  const page: ReadyMcpServerVersion[] = [];
  let after = query.after;
  let lastRead: ReadyMcpServerVersion | undefined;
  for (let scanned = 0; scanned < VERSION_SCAN;) {
    const batch = await reader.registry.listReadyMcpServerVersions({
      ...query,
      ...(after !== undefined ? { after } : {}),
      limit: SCAN_BATCH,
    });
    const exhausted = batch.length < SCAN_BATCH;
    for (const [i, v] of batch.entries()) {
      lastRead = v;
      scanned++;
      if (v.version === version) page.push(v);
      if (page.length === limit) return { page, next: exhausted && i === batch.length - 1 ? undefined : v };
    }
    if (exhausted || lastRead === undefined) return { page, next: undefined };
    after = { name: lastRead.name, version: lastRead.version };
    reader.checkDeadline();
  }
  // Out of reading budget: the next page continues after the last version read.
  return { page, next: lastRead };
}

/** Every version of `name` the reader sees, or 403/404 as a lookup by id would answer. */
async function versionsOf(reader: McpReader, name: string): Promise<McpServerVersion[]> {
  const found = await reader.registry.getMcpServerVersionsByName(await reader.readable(), name);
  if (found.length > 0) {
    // A name is one server per organization; published workspaces of several organizations may hold
    // it twice: the first organization's wins.
    const org = [...found].sort((a, b) => (a.org_id < b.org_id ? -1 : a.org_id > b.org_id ? 1 : 0))[0]?.org_id;
    return found.filter((v) => v.org_id === org);
  }
  const discoverable = await reader.discoverable();
  if ((await reader.registry.getMcpServerVersionsByName(discoverable, name)).length > 0)
    throw new ApiError('access_denied', `no read access to the MCP server ${name}`);
  throw new ApiError('not_found', `MCP server ${name} not found`);
}

/** Every version of a server, the latest published first. */
export async function listServerVersions(reader: McpReader, name: string, includeDeleted = false): Promise<ServerList> {
  const versions = (await versionsOf(reader, name))
    .filter((v) => includeDeleted || v.status !== 'deleted')
    .sort((a, b) =>
      a.published_at === b.published_at ? cmp(b.version, a.version) : cmp(b.published_at, a.published_at),
    )
    .slice(0, MAX_VERSIONS);
  if (versions.length === 0) throw new ApiError('not_found', `MCP server ${name} not found`);
  reader.checkDeadline();
  return { servers: await presentVersions(reader, versions.map(readyVersion)), metadata: { count: versions.length } };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** One version of a server; `latest` is the version the registry marks latest. */
export async function getServerVersion(
  reader: McpReader,
  name: string,
  version: string,
  includeDeleted = false,
): Promise<ServerResponseJson> {
  const versions = await versionsOf(reader, name);
  const found = versions.find((v) => (version === 'latest' ? v.is_latest : v.version === version));
  if (found === undefined || (!includeDeleted && found.status === 'deleted'))
    throw new ApiError('not_found', `MCP server ${name} has no version ${version}`);
  const [answer] = await presentVersions(reader, [readyVersion(found)]);
  return answer as ServerResponseJson;
}
