/** Skill: the shared artifact fields and the agents that use it. */
import type { SkillResolvers } from '../../generated/graphql.ts';
import { readableArtifact } from '../authorize.ts';
import { relatedArtifacts } from '../relationships.ts';
import { artifactFields } from './Artifact.ts';

/** Resolvers of `Skill` (see the file comment). */
export const Skill: SkillResolvers = {
  __resolveReference: (ref, ctx) => readableArtifact(ctx, ref.id, 'skill'),
  ...artifactFields,
  usedBy: (row, _args, ctx) => relatedArtifacts(ctx, row, 'uses_skill', 'incoming', 'agent'),
};
