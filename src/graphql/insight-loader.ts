/**
 * `Skill.insights`, `Agent.insights` and `Workspace.insights`: the handlers of REST's insight lists
 * (insights/list-insights.ts), as connections. The pages the executor asks for together (the skills
 * of a list, the agents of `_entities`, the workspaces of a subtree) go through one DataLoader per
 * request: equal pages are read once, and the pages of one depth are one store call
 * (`listInsightPages`) whatever the number of parents, one per distinct kinds, since and `first`.
 */
import DataLoader from 'dataloader';
import type { RequestContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import {
  decodeInsightCursor,
  encodeInsightCursor,
  findInsightPages,
  type InsightItem,
  type InsightList,
  type InsightListInput,
  type InsightPage,
  type InsightPageKey,
} from '../insights/list-insights.ts';
import type { InsightKind } from '../store/insight-port.ts';
import { checkFirst } from './connection.ts';

/** The arguments of the three fields. */
export interface InsightArgs {
  kind?: InsightKind[] | null;
  since?: number | null;
  first?: number | null;
  after?: string | null;
}

const byRequest = new WeakMap<RequestContext, DataLoader<InsightPageKey, InsightPage, string>>();

function pageOf(ctx: RequestContext, key: InsightPageKey): Promise<InsightPage> {
  let loader = byRequest.get(ctx);
  if (loader === undefined) {
    loader = new DataLoader((keys) => findInsightPages(ctx, keys), {
      cacheKeyFn: (k) => JSON.stringify([k.list.key, k.list.workspaceIds.length, k.input.limit, k.input.after ?? null]),
    });
    byRequest.set(ctx, loader);
  }
  return loader.load(key);
}

/** The list input of the arguments (no position yet: a cursor is read against its list). */
export function insightInput(args: InsightArgs): InsightListInput {
  const limit = checkFirst(args.first);
  return {
    // Each kind once, as REST's `kind`: the enum leaves at most INSIGHT_KINDS.length of them, however long the list sent.
    ...(args.kind != null ? { kinds: [...new Set(args.kind)] } : {}),
    ...(args.since != null ? { sinceS: args.since } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}

/** The connection of a list's page: `after` must be a cursor of this very list (else invalid_field). */
export async function insightConnection(
  ctx: RequestContext,
  list: InsightList,
  input: InsightListInput,
  after: string | null | undefined,
) {
  let position = input;
  if (after != null) {
    const decoded = decodeInsightCursor(after, list);
    if (decoded === null)
      throw new ApiError('invalid_field', 'after is not a cursor of this list', { field: '/after' });
    position = { ...input, after: decoded };
  }
  const page = await pageOf(ctx, { list, input: position });
  const cursor = (item: InsightItem) =>
    encodeInsightCursor({ window_end_s: item.window.end_time_unix_seconds, id: item.id }, list);
  const first = page.items[0];
  const last = page.items.at(-1);
  return {
    get edges() {
      return page.items.map((node) => ({ cursor: cursor(node), node }));
    },
    nodes: page.items,
    get pageInfo() {
      return {
        hasNextPage: page.next !== undefined,
        hasPreviousPage: after != null,
        startCursor: first === undefined ? null : cursor(first),
        endCursor: last === undefined ? null : cursor(last),
      };
    },
  };
}
