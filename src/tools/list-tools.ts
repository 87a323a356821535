/** Operation 6: the caller's readable tools (latest versions), by name, paged by limit/offset. */
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { presentArtifactsJson, type ArtifactJson } from '../artifacts/present.ts';
import { pageWindow } from '../shared/paging.ts';
import type { ArtifactQuery, Page } from '../store/registry-port.ts';

const LIST_DEFAULT_LIMIT = 50;
const LIST_MAX_LIMIT = 200;

export interface ToolListResult {
  /** Ready JSON text per tool. */
  items: ArtifactJson[];
  page: { limit: number; offset: number; total: number };
}

/** Authorization and paging of operation 6, reading the page with `find` (whole rows or ready ones). */
async function toolPage<T>(
  ctx: RequestContext,
  limit: number | undefined,
  offset: number | undefined,
  find: (query: ArtifactQuery) => Promise<Page<T>>,
): Promise<{ rows: T[]; page: ToolListResult['page'] }> {
  const window = pageWindow(limit, offset, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT);
  const access = await ctx.access();
  const page = await find({
    kind: 'tool',
    workspaceIds: access.readableWorkspaceIds,
    sorts: [{ field: 'name', desc: false }],
    limit: window.limit,
    offset: window.offset,
  });
  ctx.checkDeadline();
  return { rows: page.items, page: { ...window, total: page.total } };
}

/** The page of the tool list as stored rows (GraphQL resolves their fields). */
export async function findTools(
  ctx: RequestContext,
  limit?: number,
  offset?: number,
): Promise<{ rows: ArtifactVersion[]; page: ToolListResult['page'] }> {
  return toolPage(ctx, limit, offset, (q) => ctx.registry.findArtifacts(q));
}

export async function listTools(ctx: RequestContext, limit?: number, offset?: number): Promise<ToolListResult> {
  const { rows, page } = await toolPage(ctx, limit, offset, (q) => ctx.registry.findReadyArtifacts(q));
  const items = await presentArtifactsJson(ctx.registry, await ctx.access(), rows);
  ctx.checkDeadline();
  return { items, page };
}
