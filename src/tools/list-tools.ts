/** Operation 6: the caller's readable tools (latest versions), by name, paged by limit/offset. */
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { presentArtifactsJson, type ArtifactJson } from '../org/present-artifacts.ts';
import { pageWindow } from '../shared/paging.ts';

const LIST_DEFAULT_LIMIT = 50;
const LIST_MAX_LIMIT = 200;

export interface ToolListResult {
  /** Ready JSON text per tool. */
  items: ArtifactJson[];
  page: { limit: number; offset: number; total: number };
}

/** The page of the tool list as stored rows: authorization and paging of operation 6. */
export async function findTools(
  ctx: RequestContext,
  limit?: number,
  offset?: number,
): Promise<{ rows: ArtifactVersion[]; page: ToolListResult['page'] }> {
  const window = pageWindow(limit, offset, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT);
  const access = await ctx.access();
  const page = await ctx.registry.findArtifacts({
    kind: 'tool',
    workspaceIds: access.readableWorkspaceIds,
    sorts: [{ field: 'name', desc: false }],
    limit: window.limit,
    offset: window.offset,
  });
  ctx.checkDeadline();
  return { rows: page.items, page: { ...window, total: page.total } };
}

export async function listTools(ctx: RequestContext, limit?: number, offset?: number): Promise<ToolListResult> {
  const { rows, page } = await findTools(ctx, limit, offset);
  const items = await presentArtifactsJson(ctx.registry, await ctx.access(), rows);
  ctx.checkDeadline();
  return { items, page };
}
