/** Relationship: both ends, loaded and checked readable with the relationship (relationships.ts). */
import type { RelationshipResolvers } from '../../generated/graphql.ts';

/** Resolvers of `Relationship` (see the file comment). */
export const Relationship: RelationshipResolvers = {
  from: (rel) => rel.fromRow,
  to: (rel) => rel.toRow,
};
