/**
 * Operation 7: directory users of the caller's organization, ordered by id, paged by
 * limit/offset or by the opaque `next_cursor` of the previous page.
 */
import type { KindCounts } from '../store/registry-port.ts';
import type { RequestContext } from '../context.ts';
import type { User } from '../domain/types.ts';
import { ApiError } from '../errors.ts';
import { cursorLimit, decodeCursor, encodeCursor, pageWindow } from '../shared/paging.ts';

export interface UserListResult {
  items: Record<string, unknown>[];
  page: { limit: number; offset: number; total: number; next_cursor?: string };
}

function kindTotal(counts: Record<string, number> | undefined): number {
  return Object.values(counts ?? {}).reduce((a, b) => a + b, 0);
}

function presentUser(user: User, counts: Record<string, number> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { id: user.id, created_at: user.created_at, updated_at: user.updated_at };
  if (user.name !== undefined) out.name = user.name;
  if (user.email !== undefined) out.email = user.email;
  out.artifact_count = kindTotal(counts);
  out.artifact_count_by_kind = counts ?? {};
  if (user.enrichment !== undefined) out.enrichment = user.enrichment;
  return out;
}

/** The opaque cursor addressing `offset` in the user list of the caller's organization. */
export function userListCursor(ctx: RequestContext, offset: number, limit?: number): string {
  return encodeCursor(offset, ctx.caller.orgId, limit);
}

/**
 * The user directory is for people: an agent's service account reads its agent's workspace subtree
 * and ingests telemetry, and is refused the directory (DESIGN §12), over every transport.
 */
export function assertDirectoryReader(ctx: RequestContext): void {
  if (ctx.caller.kind === 'service_account')
    throw new ApiError('access_denied', 'service accounts cannot read the user directory');
}

/** The page of the user list as stored rows: paging of operation 7, `next_cursor` included. */
export async function findUsers(
  ctx: RequestContext,
  query: { limit?: number; offset?: number; cursor?: string },
): Promise<{ rows: User[]; page: UserListResult['page'] }> {
  assertDirectoryReader(ctx);
  const orgId = ctx.caller.orgId;
  let offset = query.offset;
  let limit = query.limit;
  if (query.cursor !== undefined) {
    if (query.offset !== undefined) throw new ApiError('invalid_query', 'cursor and offset cannot be used together');
    const decoded = decodeCursor(query.cursor, orgId);
    if (decoded === null) throw new ApiError('invalid_query', 'cursor is not a cursor of this list');
    offset = decoded;
    limit ??= cursorLimit(query.cursor); // following next_cursor keeps the page size it was issued with
  }
  const window = pageWindow(limit, offset, 50, 200);
  const page = await ctx.registry.listUsers(orgId, window.limit, window.offset);
  ctx.checkDeadline();
  const result: Awaited<ReturnType<typeof findUsers>> = { rows: page.items, page: { ...window, total: page.total } };
  const next = window.offset + page.items.length;
  if (window.limit > 0 && next < page.total) result.page.next_cursor = userListCursor(ctx, next, window.limit);
  return result;
}

export async function listUsers(
  ctx: RequestContext,
  query: { limit?: number; offset?: number; cursor?: string },
): Promise<UserListResult> {
  const { rows, page } = await findUsers(ctx, query);
  const counts =
    rows.length > 0
      ? await ctx.registry.countArtifacts(
          'creator',
          rows.map((u) => u.id),
          (await ctx.access()).readableWorkspaceIds,
        )
      : (new Map() as KindCounts);
  ctx.checkDeadline();
  return { items: rows.map((u) => presentUser(u, counts.get(u.id))), page };
}
