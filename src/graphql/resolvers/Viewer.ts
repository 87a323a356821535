/** Viewer: the authenticated caller (a user or an agent's service account). */
import type { Workspace } from '../../domain/types.ts';
import type { ViewerResolvers } from '../../generated/graphql.ts';
import { orgUser, readableArtifact } from '../authorize.ts';

/** Resolvers of `Viewer` (see the file comment). */
export const Viewer: ViewerResolvers = {
  user: (caller, _args, ctx) => (caller.kind === 'user' ? orgUser(ctx, caller.userId) : null),
  agent: (caller, _args, ctx) => (caller.kind === 'service_account' ? readableArtifact(ctx, caller.agentId, 'agent') : null),
  workspaces: async (_caller, _args, ctx) => {
    const access = await ctx.access();
    return access.readableWorkspaceIds.map((id) => access.workspace(id) as Workspace);
  },
};
