/** Project: the exported-project fields of REST operation 5 and its workspace and artifact edges. */
import type { ProjectResolvers } from '../../generated/graphql.ts';
import { readableProject, readableWorkspace, readableWorkspaceOrNull, withAccess } from '../authorize.ts';
import { total } from './counts.ts';
import { settledSlice } from '../settle-nodes.ts';

/** Resolvers of `Project` (see the file comment). */
export const Project: ProjectResolvers = {
  __resolveReference: (ref, ctx) => readableProject(ctx, ref.id),
  rootWorkspaceId: (p, _args, ctx) =>
    withAccess(ctx, (a) => a.workspace(p.workspace_id)?.root_workspace_id ?? p.workspace_id),
  artifactCount: async (p, _args, ctx) => total(await ctx.loaders.artifactCountsByProject.load(p.id)),
  artifactCountByKind: (p, _args, ctx) => ctx.loaders.artifactCountsByProject.load(p.id),
  permissions: (p, _args, ctx) => withAccess(ctx, (a) => a.projectPermissions(p)),
  workspace: (p, _args, ctx) => readableWorkspace(ctx, p.workspace_id),
  rootWorkspace: async (p, _args, ctx) => {
    const ws = await readableWorkspace(ctx, p.workspace_id);
    return readableWorkspaceOrNull(ctx, ws.root_workspace_id);
  },
  artifacts: async (p, args, ctx, info) => {
    const rows = (await ctx.loaders.artifactsOfWorkspace.load(p.workspace_id)).filter((a) => a.project_id === p.id);
    const list = args.kind ? rows.filter((a) => a.kind === args.kind) : rows;
    return settledSlice(ctx, info, `project:${p.id}:${args.kind ?? ''}`, list, args.first, args.after);
  },
};
