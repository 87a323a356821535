/**
 * Reading insights: those about a skill, about an agent, and a workspace's feed, newest window
 * first, paged by an opaque keyset cursor. The subject is read as any skill or agent (404 unknown
 * or of another organization, 403 unreadable); only insights of workspaces the caller can read are
 * listed, so an insight computed from spans the caller cannot see never shows. Transport-free: REST
 * reads one page with {@link findInsights}; GraphQL reads the pages a query level asks for together
 * with {@link findInsightPages}, one store call for them all.
 */
import type { RequestContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { fingerprint } from '../shared/paging.ts';
import type { InsightKind, InsightPosition, InsightRecord, InsightSubject } from '../store/insight-port.ts';
import { insightResource, type InsightResource } from './resource.ts';

export const INSIGHTS_DEFAULT_LIMIT = 20;
export const INSIGHTS_MAX_LIMIT = 100;

/** What a list of insights asks for; `after` is a position a cursor of this list decoded to. */
export interface InsightListInput {
  kinds?: readonly InsightKind[];
  /** Only insights whose window ends after this time (Unix seconds). */
  sinceS?: number;
  /** Default 20, clamped to 100. */
  limit?: number;
  after?: InsightPosition;
}

/** The insights of a list: the scope, subject and filters its cursors are bound to. */
export interface InsightList {
  workspaceIds: readonly string[];
  subject?: InsightSubject;
  /** Names the list for its cursors (subject or workspace, kinds, since). */
  key: string;
}

/** An insight as both transports show it (and webhooks carry it): resource.ts's, as a type alias. */
export type InsightItem = { [K in keyof InsightResource]: InsightResource[K] };

export interface InsightPage {
  items: InsightItem[];
  /** The position after the last item, when more follow. */
  next?: InsightPosition;
}

/** The page size of a list: default 20, at most 100. */
function insightLimit(limit: number | undefined): number {
  return Math.min(limit ?? INSIGHTS_DEFAULT_LIMIT, INSIGHTS_MAX_LIMIT);
}

/** The list's cursor key: the cursors of one list are refused by another (another subject, kinds or since). */
function listKey(base: string, input: Pick<InsightListInput, 'kinds' | 'sinceS'>): string {
  return `${base}:${fingerprint([[...new Set(input.kinds ?? [])].sort(), input.sinceS ?? null])}`;
}

/** The kinds a list filters by, as the store takes them: none (or an empty list) for every kind. */
function kindsOf(input: InsightListInput): { kinds?: readonly InsightKind[] } {
  return input.kinds !== undefined && input.kinds.length > 0 ? { kinds: input.kinds } : {};
}

/** The page of `limit` items of the `limit` + 1 rows asked (the one more tells whether more follow). */
function pageOf(rows: readonly InsightRecord[], limit: number): InsightPage {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(insightResource),
    ...(rows.length > limit && last !== undefined ? { next: { window_end_s: last.window_end_s, id: last.id } } : {}),
  };
}

/** One page of a list: newest window first (then id), `limit` + 1 asked to know whether more follow. */
async function findInsights(ctx: RequestContext, list: InsightList, input: InsightListInput): Promise<InsightPage> {
  const limit = insightLimit(input.limit);
  if (limit === 0 || list.workspaceIds.length === 0) return { items: [] };
  const rows = await ctx.insights.listInsights({
    orgId: ctx.caller.orgId,
    workspaceIds: list.workspaceIds,
    ...(list.subject !== undefined ? { subject: list.subject } : {}),
    ...kindsOf(input),
    ...(input.sinceS !== undefined ? { sinceS: input.sinceS } : {}),
    ...(input.after !== undefined ? { after: input.after } : {}),
    limit: limit + 1,
  });
  ctx.checkDeadline();
  return pageOf(rows, limit);
}

/** A page of a list, as a batch asks for it. */
export interface InsightPageKey {
  list: InsightList;
  input: InsightListInput;
}

/**
 * Pages of several lists, each as {@link findInsights} answers it alone: those sharing kinds,
 * since and page size (all of a query level's, unless aliases ask otherwise) are one store call,
 * whatever their number; a scope many share is sent once.
 */
export async function findInsightPages(ctx: RequestContext, keys: readonly InsightPageKey[]): Promise<InsightPage[]> {
  const groups = new Map<string, number[]>();
  for (const [i, { input }] of keys.entries()) {
    const kinds = kindsOf(input).kinds;
    const group = JSON.stringify([
      kinds === undefined ? null : [...new Set(kinds)].sort(),
      input.sinceS ?? null,
      insightLimit(input.limit),
    ]);
    groups.set(group, [...(groups.get(group) ?? []), i]);
  }
  const pages = keys.map((): InsightPage => ({ items: [] }));
  const read = async (indexes: number[]) => {
    const { input } = keys[indexes[0] as number] as InsightPageKey;
    const limit = insightLimit(input.limit);
    const asked = indexes.filter((i) => limit > 0 && (keys[i] as InsightPageKey).list.workspaceIds.length > 0);
    if (asked.length === 0) return;
    const scopes: (readonly string[])[] = [];
    const scopeOf = new Map<string, number>();
    const requests = asked.map((i) => {
      const { list, input: own } = keys[i] as InsightPageKey;
      const key = JSON.stringify(list.workspaceIds);
      let scope = scopeOf.get(key);
      if (scope === undefined) {
        scope = scopes.push(list.workspaceIds) - 1;
        scopeOf.set(key, scope);
      }
      return {
        scope,
        ...(list.subject !== undefined ? { subject: list.subject } : {}),
        ...(own.after !== undefined ? { after: own.after } : {}),
      };
    });
    const rows = await ctx.insights.listInsightPages({
      orgId: ctx.caller.orgId,
      scopes,
      pages: requests,
      ...kindsOf(input),
      ...(input.sinceS !== undefined ? { sinceS: input.sinceS } : {}),
      limit: limit + 1,
    });
    for (const [j, i] of asked.entries()) pages[i] = pageOf(rows[j] ?? [], limit);
  };
  await Promise.all([...groups.values()].map(read));
  ctx.checkDeadline();
  return pages;
}

/** The list of a skill's or an agent's insights (404/403 as any skill or agent read). */
export async function subjectList(
  ctx: RequestContext,
  subject: { type: 'skill' | 'agent'; id: string },
  input: InsightListInput,
): Promise<InsightList> {
  const [artifact, access] = await Promise.all([ctx.loaders.artifact.load(subject.id), ctx.access()]);
  if (artifact === null || artifact.kind !== subject.type)
    throw new ApiError('not_found', `${subject.type} ${subject.id} not found`);
  access.assertReadable(artifact.workspace_id, subject.type, subject.id);
  return {
    workspaceIds: access.readableWorkspaceIds,
    subject,
    key: listKey(`${subject.type}:${subject.id}`, input),
  };
}

/**
 * A workspace's feed: the insights of the workspace and of its descendants the caller can read (a
 * role applies to a whole subtree, as the export shows it); 404/403 as any workspace read.
 */
export async function workspaceInsightList(
  ctx: RequestContext,
  workspaceId: string,
  input: InsightListInput,
): Promise<InsightList> {
  const access = await ctx.access();
  return { workspaceIds: access.scope(workspaceId), key: listKey(`workspace:${workspaceId}`, input) };
}

/** The cursor of a position in a list: base64url of `{e, i, h}` (window end, id, the list's key). */
export function encodeInsightCursor(position: InsightPosition, list: InsightList): string {
  return Buffer.from(JSON.stringify({ e: position.window_end_s, i: position.id, h: list.key })).toString('base64url');
}

/** The position of a cursor of `list`, or null when it is not one. */
export function decodeInsightCursor(cursor: string, list: InsightList): InsightPosition | null {
  if (cursor.length > 1024 || !/^[\w-]+$/.test(cursor)) return null;
  try {
    const { e, i, h } = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) ?? {}) as Record<
      string,
      unknown
    >;
    if (!Number.isSafeInteger(e) || typeof i !== 'string' || i === '' || h !== list.key) return null;
    return { window_end_s: e as number, id: i };
  } catch {
    return null;
  }
}

/** The query string of the REST lists (kinds parsed from `kind`, repeated or comma-separated). */
export interface InsightListQuery {
  kind?: InsightKind[];
  since?: number;
  limit?: number;
  cursor?: string;
}

/** A REST page: the items and, when more follow, the cursor of the next page. */
export type InsightListAnswer = {
  items: InsightItem[];
  next_cursor?: string;
};

/**
 * The REST list of a skill's or an agent's insights: the subject read first (404/403), then a
 * cursor that is not one of this list's refused (400 invalid_query), then the page.
 */
export async function listSubjectInsights(
  ctx: RequestContext,
  subject: { type: 'skill' | 'agent'; id: string },
  query: InsightListQuery,
): Promise<InsightListAnswer> {
  const input: InsightListInput = {
    ...(query.kind !== undefined ? { kinds: query.kind } : {}),
    ...(query.since !== undefined ? { sinceS: query.since } : {}),
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
  };
  const list = await subjectList(ctx, subject, input);
  if (query.cursor !== undefined) {
    const after = decodeInsightCursor(query.cursor, list);
    if (after === null) throw new ApiError('invalid_query', 'query parameter cursor is not a cursor of this list');
    input.after = after;
  }
  const page = await findInsights(ctx, list, input);
  return {
    items: page.items,
    ...(page.next !== undefined ? { next_cursor: encodeInsightCursor(page.next, list) } : {}),
  };
}
