/**
 * The caller's readable MCP servers (latest versions, deleted ones left out), ordered by name and
 * paged by keyset: a page starts after the (name, version) of the last server of the one before.
 * Bounded (DESIGN §12): the page is clamped, the search text limited in length.
 */
import type { RequestContext } from '../context.ts';
import type { McpServerVersion } from '../domain/types.ts';
import { ApiError } from '../errors.ts';

export const SERVERS_DEFAULT_LIMIT = 50;
export const SERVERS_MAX_LIMIT = 200;
/** Characters of a `search` text. */
const SERVERS_SEARCH_MAX_LENGTH = 200;

export interface FindServersInput {
  /** Case-insensitive part of the name; empty lists every readable server. */
  search?: string;
  /** The (name, version) of the last server of the previous page. */
  after?: { name: string; version: string };
  /** Servers per page, from 0; default SERVERS_DEFAULT_LIMIT, clamped to SERVERS_MAX_LIMIT. */
  limit?: number;
}

export interface ServerPage {
  rows: McpServerVersion[];
  /** Whether more servers follow this page. */
  hasMore: boolean;
}

/** A page of the readable servers; 422 `invalid_field` for a negative limit or a search text too long. */
export async function findMcpServers(ctx: RequestContext, input: FindServersInput): Promise<ServerPage> {
  if (input.limit !== undefined && input.limit < 0)
    throw new ApiError('invalid_field', 'first must be 0 or more', { field: '/first' });
  const search = input.search ?? '';
  if (search.length > SERVERS_SEARCH_MAX_LENGTH)
    throw new ApiError('invalid_field', `search must be at most ${SERVERS_SEARCH_MAX_LENGTH} characters`, {
      field: '/search',
    });
  const limit = Math.min(input.limit ?? SERVERS_DEFAULT_LIMIT, SERVERS_MAX_LIMIT);
  const access = await ctx.access();
  if (access.readableWorkspaceIds.length === 0) return { rows: [], hasMore: false };
  // One more than the page tells whether another follows (`first: 0` too).
  const rows = await ctx.registry.listMcpServerVersions({
    workspaceIds: access.readableWorkspaceIds,
    ...(search !== '' ? { search } : {}),
    ...(input.after !== undefined ? { after: input.after } : {}),
    latestOnly: true,
    includeDeleted: false,
    limit: limit + 1,
  });
  ctx.checkDeadline();
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
