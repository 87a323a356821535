/** The executable subgraph schema: the SDL of schema/, the resolvers, enums and scalars. */
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLSchema } from 'graphql';
import { lowerCaseEnumResolvers } from './enums.ts';
import { resolvers } from './resolvers/index.ts';
import { Int64Scalar, JSONScalar } from './scalars.ts';
import { loadTypeDefs } from './type-defs.ts';

/** The resolver map of a schema module, from the public signature of buildSubgraphSchema (not its dist/ paths). */
type SchemaModule = Extract<Parameters<typeof buildSubgraphSchema>[0], readonly unknown[]>[number];
type ResolverMap = NonNullable<Extract<SchemaModule, { typeDefs: unknown }>['resolvers']>;

/** The Federation v2 subgraph schema of this service, resolvers attached. */
export function buildRegistrySubgraph(): GraphQLSchema {
  const typeDefs = loadTypeDefs();
  const resolverMap = {
    ...lowerCaseEnumResolvers(typeDefs),
    ...resolvers,
    JSON: JSONScalar,
    Int64: Int64Scalar,
  } as ResolverMap;
  return buildSubgraphSchema([{ typeDefs, resolvers: resolverMap }]);
}
