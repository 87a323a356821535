/** Viewer: the authenticated caller (a user or an agent's service account). */
import type { Workspace } from '../../domain/types.ts';
import type { ViewerResolvers } from '../../generated/graphql.ts';
import { orgUser, readableArtifact, withAccess } from '../authorize.ts';

/** Resolvers of `Viewer` (see the file comment). */
export const Viewer: ViewerResolvers = {
  user: (caller, _args, ctx) => (caller.kind === 'user' ? orgUser(ctx, caller.userId) : null),
  agent: (caller, _args, ctx) =>
    caller.kind === 'service_account' ? readableArtifact(ctx, caller.agentId, 'agent') : null,
  workspaces: (_caller, _args, ctx) =>
    withAccess(ctx, (a) => a.readableWorkspaceIds.map((id) => a.workspace(id) as Workspace)),
};
