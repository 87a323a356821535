/** Repo: a source repository, its workspace and the readable artifacts synced from it. */
import type { RepoResolvers } from '../../generated/graphql.ts';
import { readableRepo, readableWorkspace, withAccess } from '../authorize.ts';
import { settledSlice } from '../settle-nodes.ts';

/** Resolvers of `Repo` (see the file comment). */
export const Repo: RepoResolvers = {
  __resolveReference: (ref, ctx) => readableRepo(ctx, ref.id),
  workspace: (r, _args, ctx) => readableWorkspace(ctx, r.workspace_id),
  artifacts: async (r, args, ctx, info) => {
    const rows = await ctx.loaders.artifactsOfRepo.load(r.id);
    const list = await withAccess(ctx, (a) =>
      rows.filter((row) => a.canRead(row.workspace_id) && (!args.kind || row.kind === args.kind)),
    );
    return settledSlice(ctx, info, `repo:${r.id}:${args.kind ?? ''}`, list, args.first, args.after);
  },
};
