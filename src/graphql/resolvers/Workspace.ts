/**
 * Workspace: the exported-workspace fields of REST operation 5 (counts, role, permissions) and
 * the tree edges. Only readable workspaces are ever handed out, so their subtree, projects,
 * artifacts and members are readable too (roles apply to whole subtrees).
 */
import type { Workspace as WorkspaceRow } from '../../domain/types.ts';
import type { WorkspaceResolvers } from '../../generated/graphql.ts';
import { readableWorkspace, readableWorkspaceOrNull, withAccess } from '../authorize.ts';
import { total } from './counts.ts';
import { workspaceInsightList } from '../../insights/list-insights.ts';
import { listSubscriptions } from '../../insights/webhook-subscriptions.ts';
import { getWorkspaceSettings } from '../../insights/workspace-settings.ts';
import { insightConnection, insightInput } from '../insight-loader.ts';
import { settledSlice } from '../settle-nodes.ts';

/** Resolvers of `Workspace` (see the file comment). */
export const Workspace: WorkspaceResolvers = {
  // A copy: the org tree's workspaces are shared between requests (auth/registry-memo.ts, frozen), and
  // federation marks the entity it resolves with its __typename.
  __resolveReference: async (ref, ctx) => ({ ...(await readableWorkspace(ctx, ref.id)) }),
  artifactCount: async (ws, _args, ctx) => total(await ctx.loaders.artifactCountsByWorkspace.load(ws.id)),
  artifactCountByKind: (ws, _args, ctx) => ctx.loaders.artifactCountsByWorkspace.load(ws.id),
  effectiveRole: (ws, _args, ctx) => withAccess(ctx, (a) => a.roleOf(ws.id)),
  memberCount: (ws, _args, ctx) => ctx.loaders.memberCount.load(ws.id),
  parent: (ws, _args, ctx) => (ws.parent_id === undefined ? null : readableWorkspaceOrNull(ctx, ws.parent_id)),
  rootWorkspace: (ws, _args, ctx) => readableWorkspaceOrNull(ctx, ws.root_workspace_id),
  permissions: (ws, _args, ctx) => withAccess(ctx, (a) => a.workspacePermissions(ws.id)),
  children: (ws, _args, ctx) =>
    withAccess(ctx, (a) =>
      a.readableWorkspaceIds.map((id) => a.workspace(id) as WorkspaceRow).filter((w) => w.parent_id === ws.id),
    ),
  subtree: (ws, _args, ctx) => withAccess(ctx, (a) => a.subtree(ws.id).map((id) => a.workspace(id) as WorkspaceRow)),
  projects: (ws, _args, ctx) => ctx.loaders.projectsOfWorkspace.load(ws.id),
  repos: (ws, _args, ctx) => ctx.loaders.reposOfWorkspace.load(ws.id),
  artifacts: async (ws, args, ctx, info) => {
    const rows = await ctx.loaders.artifactsOfWorkspace.load(ws.id);
    const list = args.kind ? rows.filter((a) => a.kind === args.kind) : rows;
    return settledSlice(ctx, info, `ws:${ws.id}:${args.kind ?? ''}`, list, args.first, args.after);
  },
  members: (ws, _args, ctx) => ctx.loaders.membershipsOfWorkspace.load(ws.id),
  insights: async (ws, args, ctx) => {
    const input = insightInput(args);
    return insightConnection(ctx, await workspaceInsightList(ctx, ws.id, input), input, args.after);
  },
  webhookSubscriptions: (ws, _args, ctx) => listSubscriptions(ctx, ws.id),
  insightSettings: async (ws, _args, ctx) => (await getWorkspaceSettings(ctx, ws.id)).settings,
};
