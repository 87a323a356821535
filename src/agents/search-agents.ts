/**
 * Operation 2, agent search (DESIGN §8): full text (keyword, ranked), prefix or exact match over
 * the caller's readable agents, sorted, paged by offset or by an opaque cursor.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { ApiError, ruleBroken } from '../errors.ts';
import { presentArtifactsJson, type ArtifactJson } from '../artifacts/present.ts';
import { decodeCursor, encodeCursor, fingerprint, pageWindow } from '../shared/paging.ts';
import type { ArtifactQuery, ArtifactSort, ArtifactSortField, Page, SearchStrategy } from '../store/registry-port.ts';

const SEARCH_STRATEGIES: readonly SearchStrategy[] = ['keyword', 'prefix', 'exact'];
const SORT_FIELDS: readonly ArtifactSortField[] = ['relevance', 'name', 'display_name', 'created_at', 'updated_at'];
export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX_LIMIT = 100;

/** The body of operation 2 (validated by the REST layer; GraphQL builds the same input from its arguments). */
export const agentSearchSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    query: { type: 'string', maxLength: 1000, description: 'Text to search for; empty lists every readable agent' },
    strategy: {
      type: 'string',
      enum: SEARCH_STRATEGIES,
      description: 'keyword (default, ranked full text), prefix or exact',
    },
    sorts: {
      type: 'array',
      maxItems: 5,
      items: { type: 'string', pattern: `^-?(${SORT_FIELDS.join('|')})$` },
      description: 'Field names, a leading - for descending; default relevance with a query, else name',
    },
    limit: { type: 'integer', minimum: 0, description: 'Default 20, larger values clamped to 100' },
    offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    cursor: { type: 'string', maxLength: 512, description: 'Opaque position; not together with offset' },
    workspace_id: { type: 'string', minLength: 1, maxLength: 200, description: 'Only this workspace and its subtree' },
  },
} as const satisfies JSONSchema;

export type AgentSearchInput = FromSchema<typeof agentSearchSchema>;

export interface AgentSearchResult {
  /** Ready JSON text per agent. */
  items: ArtifactJson[];
  page: { limit: number; offset: number; total: number };
}

function parseSorts(sorts: string[] | undefined, hasQuery: boolean): ArtifactSort[] {
  if (sorts === undefined || sorts.length === 0) {
    return [{ field: hasQuery ? 'relevance' : 'name', desc: false }];
  }
  return (
    sorts
      .map((s) => ({ field: s.replace(/^-/, '') as ArtifactSortField, desc: s.startsWith('-') }))
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
  const sorts = parseSorts(input.sorts, query !== '');
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
  const sorts = parseSorts(input.sorts, query !== '');
  return encodeCursor(offset, fingerprint([query, input.strategy ?? 'keyword', sorts, input.workspace_id ?? null]));
}
