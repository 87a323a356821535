/** Relationship: both ends resolved through the artifact loader (already checked readable). */
import type { RelationshipResolvers } from '../../generated/graphql.ts';
import { readableArtifact } from '../authorize.ts';

/** Resolvers of `Relationship` (see the file comment). */
export const Relationship: RelationshipResolvers = {
  from: (rel, _args, ctx) => readableArtifact(ctx, rel.from.id),
  to: (rel, _args, ctx) => readableArtifact(ctx, rel.to.id),
};
