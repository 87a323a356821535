/** Tool: the shared artifact fields and the agents that use it. */
import type { ToolResolvers } from '../../generated/graphql.ts';
import { readableArtifact } from '../authorize.ts';
import { relatedArtifacts } from '../relationships.ts';
import { artifactFields } from './Artifact.ts';

/** Resolvers of `Tool` (see the file comment). */
export const Tool: ToolResolvers = {
  __resolveReference: (ref, ctx) => readableArtifact(ctx, ref.id, 'tool'),
  ...artifactFields,
  usedBy: (row, _args, ctx) => relatedArtifacts(ctx, row, 'uses_tool', 'incoming', 'agent'),
};
