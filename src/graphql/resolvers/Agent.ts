/** Agent: the shared artifact fields, its profile image (operation 8) and its tool/skill edges. */
import { getProfileImage } from '../../agents/profile-image.ts';
import type { AgentResolvers } from '../../generated/graphql.ts';
import { readableArtifact } from '../authorize.ts';
import { relatedArtifacts } from '../relationships.ts';
import { artifactFields } from './Artifact.ts';

/** Resolvers of `Agent` (see the file comment). */
export const Agent: AgentResolvers = {
  __resolveReference: (ref, ctx) => readableArtifact(ctx, ref.id, 'agent'),
  ...artifactFields,
  profileImage: (row, _args, ctx) => getProfileImage(ctx, row.id),
  usedTools: (row, _args, ctx) => relatedArtifacts(ctx, row, 'uses_tool', 'outgoing', 'tool'),
  usedSkills: (row, _args, ctx) => relatedArtifacts(ctx, row, 'uses_skill', 'outgoing', 'skill'),
};
