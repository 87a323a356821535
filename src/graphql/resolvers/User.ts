/** User: the directory-user fields of REST operation 7 and the artifacts the user created. */
import type { UserResolvers } from '../../generated/graphql.ts';
import { orgUser } from '../authorize.ts';
import { total } from './counts.ts';
import { settledSlice } from '../settle-nodes.ts';

/** Resolvers of `User` (see the file comment). */
export const User: UserResolvers = {
  __resolveReference: (ref, ctx) => orgUser(ctx, ref.id),
  artifactCount: async (u, _args, ctx) => total(await ctx.loaders.artifactCountsByCreator.load(u.id)),
  artifactCountByKind: (u, _args, ctx) => ctx.loaders.artifactCountsByCreator.load(u.id),
  artifacts: async (u, args, ctx, info) => {
    const rows = await ctx.loaders.artifactsOfCreator.load(u.id);
    const list = args.kind ? rows.filter((a) => a.kind === args.kind) : rows;
    return settledSlice(ctx, info, `user:${u.id}:${args.kind ?? ''}`, list, args.first, args.after);
  },
};
