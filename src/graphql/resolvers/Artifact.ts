/**
 * Fields every artifact type shares (Agent, Tool, Skill, Prompt, Document): the computed REST
 * fields (permissions, relationships, masked identity) and the edges to workspace, project,
 * repository and creator. Plain fields come from the stored document through the snake_case field
 * resolver.
 */
import type { RequestContext } from '../../context.ts';
import type { ArtifactVersion } from '../../domain/types.ts';
import type { ArtifactResolvers } from '../../generated/graphql.ts';
import { maskIdentity } from '../../shared/masked-identity.ts';
import { orgUserOrNull, readableProject, readableWorkspace, withAccess } from '../authorize.ts';
import { relationshipsOf } from '../relationships.ts';

/** The GraphQL type of each artifact kind. */
export const TYPE_OF_KIND = {
  agent: 'Agent',
  tool: 'Tool',
  skill: 'Skill',
  prompt: 'Prompt',
  document: 'Document',
} as const;

/** Artifacts resolve to their concrete type by kind. */
export const Artifact: ArtifactResolvers = {
  __resolveType: (row) => TYPE_OF_KIND[row.kind],
};

/** Resolvers of the fields of the Artifact interface, shared by every implementing type. */
export const artifactFields = {
  permissions: (row: ArtifactVersion, _args: unknown, ctx: RequestContext) =>
    withAccess(ctx, (a) => a.artifactPermissions(row)),
  relationships: (row: ArtifactVersion, _args: unknown, ctx: RequestContext) => relationshipsOf(ctx, row),
  identity: async (row: ArtifactVersion, _args: unknown, ctx: RequestContext) => {
    if (row.kind !== 'agent') return null;
    const identity = await ctx.loaders.identity.load(row.id);
    return identity === null ? null : maskIdentity(identity);
  },
  workspace: (row: ArtifactVersion, _args: unknown, ctx: RequestContext) => readableWorkspace(ctx, row.workspace_id),
  project: (row: ArtifactVersion, _args: unknown, ctx: RequestContext) =>
    row.project_id === undefined ? null : readableProject(ctx, row.project_id),
  // An edge like a workspace's parent: null unless the caller can read the repository's workspace
  // (or when no imported repository has that id: data written before repositories existed).
  repo: async (row: ArtifactVersion, _args: unknown, ctx: RequestContext) => {
    if (row.repo_id === undefined) return null;
    const repo = await ctx.loaders.repo.load(row.repo_id);
    return repo === null ? null : withAccess(ctx, (a) => (a.canRead(repo.workspace_id) ? repo : null));
  },
  creator: (row: ArtifactVersion, _args: unknown, ctx: RequestContext) => orgUserOrNull(ctx, row.created_by),
  versions: async (row: ArtifactVersion, _args: unknown, ctx: RequestContext) => {
    const versions = await ctx.loaders.artifactVersions.load(row.id);
    return withAccess(ctx, (a) => versions.filter((v) => a.canRead(v.workspace_id)));
  },
};

/** Prompts and documents: artifacts without kind-specific fields or edges. */
export const Prompt = { ...artifactFields };
export const Document = { ...artifactFields };
