/** Member: a direct membership, with its user and workspace resolved. */
import type { MemberResolvers } from '../../generated/graphql.ts';
import { orgUserOrNull, readableWorkspace } from '../authorize.ts';

/** Resolvers of `Member` (see the file comment). */
export const Member: MemberResolvers = {
  user: (m, _args, ctx) => orgUserOrNull(ctx, m.user_id),
  workspace: (m, _args, ctx) => readableWorkspace(ctx, m.workspace_id),
};
