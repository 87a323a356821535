/**
 * Operation 2, agent search (DESIGN §8): full text (keyword, ranked), prefix or exact match over
 * the caller's readable agents, sorted, paged by offset or by an opaque cursor.
 */
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { ApiError, ruleBroken } from '../errors.ts';
import { presentArtifactsJson, type ArtifactJson } from '../artifacts/present.ts';
import { decodeCursor, encodeCursor, fingerprint, pageWindow } from '../shared/paging.ts';
import type { ArtifactQuery, ArtifactSort, ArtifactSortField, Page, SearchStrategy } from '../store/registry-port.ts';

export const SEARCH_STRATEGIES: readonly SearchStrategy[] = ['keyword', 'prefix', 'exact'];
export const SORT_FIELDS: readonly ArtifactSortField[] = [
  'relevance',
  'name',
  'display_name',
  'created_at',
  'updated_at',
];
export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX_LIMIT = 100;

/** One sort of a search: REST spells it `name` / `-name`, GraphQL `{ field: NAME, direction: DESC }`. */
export interface AgentSort {
  field: ArtifactSortField;
  direction: 'asc' | 'desc';
}

/** The input of operation 2: REST's body (validated there) or GraphQL's arguments, sorts parsed. */
export interface AgentSearchInput {
  query?: string;
  strategy?: SearchStrategy;
  sorts?: AgentSort[];
  limit?: number;
  offset?: number;
  cursor?: string;
  workspace_id?: string;
}

export interface AgentSearchResult {
  /** Ready JSON text per agent. */
  items: ArtifactJson[];
  page: { limit: number; offset: number; total: number };
}

/**
 * The store's sorts of a search (cursors fingerprint them): relevance with a query, else name, when
 * none are asked for.
 */
function storeSorts(sorts: AgentSort[] | undefined, hasQuery: boolean): ArtifactSort[] {
  if (sorts === undefined || sorts.length === 0) {
    return [{ field: hasQuery ? 'relevance' : 'name', desc: false }];
  }
  return (
    sorts
      .map((s) => ({ field: s.field, desc: s.direction === 'desc' }))
      // Relevance means nothing without a query; the remaining sorts (then id) decide the order.
      .filter((s) => hasQuery || s.field !== 'relevance')
  );
}

/** Validation, authorization and paging of operation 2, reading the page with `find` (whole rows or ready ones). */
async function agentPage<T>(
  ctx: RequestContext,
  input: AgentSearchInput,
  find: (query: ArtifactQuery) => Promise<Page<T>>,
): Promise<{ rows: T[]; page: AgentSearchResult['page'] }> {
  if (input.cursor !== undefined && input.offset !== undefined) {
    throw ruleBroken('/cursor', 'cursor and offset cannot be used together');
  }
  const query = input.query?.trim() ?? '';
  const strategy = input.strategy ?? 'keyword';
  const sorts = storeSorts(input.sorts, query !== '');
  const print = fingerprint([query, strategy, sorts, input.workspace_id ?? null]);
  let offset = input.offset;
  if (input.cursor !== undefined) {
    const decoded = decodeCursor(input.cursor, print);
    if (decoded === null)
      throw new ApiError('invalid_field', 'cursor is not valid for this search', { field: '/cursor' });
    offset = decoded;
  }
  const window = pageWindow(input.limit, offset, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT);
  const access = await ctx.access();
  const scope = access.scope(input.workspace_id);
  const page = await find({
    kind: 'agent',
    workspaceIds: scope,
    ...(query !== '' ? { text: { query, strategy } } : {}),
    sorts,
    limit: window.limit,
    offset: window.offset,
  });
  ctx.checkDeadline();
  return { rows: page.items, page: { limit: window.limit, offset: window.offset, total: page.total } };
}

/** The page of a search as stored rows (GraphQL resolves their fields). */
export async function findAgents(
  ctx: RequestContext,
  input: AgentSearchInput,
): Promise<{ rows: ArtifactVersion[]; page: AgentSearchResult['page'] }> {
  return agentPage(ctx, input, (q) => ctx.registry.findArtifacts(q));
}

export async function searchAgents(ctx: RequestContext, input: AgentSearchInput): Promise<AgentSearchResult> {
  const { rows, page } = await agentPage(ctx, input, (q) => ctx.registry.findReadyArtifacts(q));
  const items = await presentArtifactsJson(ctx.registry, await ctx.access(), rows);
  ctx.checkDeadline();
  return { items, page };
}

/**
 * The cursor addressing `offset` within this search. REST pages carry no `next_cursor` (the
 * specification shows it on the user list only); GraphQL connections hand these out as cursors.
 */
export function searchCursor(input: AgentSearchInput, offset: number): string {
  const query = input.query?.trim() ?? '';
  const sorts = storeSorts(input.sorts, query !== '');
  return encodeCursor(offset, fingerprint([query, input.strategy ?? 'keyword', sorts, input.workspace_id ?? null]));
}
