/**
 * A foreign subgraph for the router tests: it only hands out references to our entities, so that a
 * router's plan continues in our subgraph through `_entities`. `agentRefs(n: 3)` and
 * `toolRefs(n: 4)` name real agents and tools of the small fixture (ag-1…, tl-1…); past those, and
 * for repositories and MCP servers, the ids name nothing (our subgraph answers not_found).
 * Each list is priced by its `n` (`@listSize(slicingArguments: ["n"])`): its own estimate.
 */
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';

export const refsTypeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@listSize"])
  type Agent @key(fields: "id", resolvable: false) { id: ID! }
  type Repo @key(fields: "id", resolvable: false) { id: ID! }
  type Tool @key(fields: "id", resolvable: false) { id: ID! }
  type McpServer @key(fields: "id", resolvable: false) { id: ID! }
  type Query {
    agentRefs(n: Int!): [Agent!]! @listSize(slicingArguments: ["n"])
    repoRefs(n: Int!): [Repo!]! @listSize(slicingArguments: ["n"])
    toolRefs(n: Int!): [Tool!]! @listSize(slicingArguments: ["n"])
    serverRefs(n: Int!): [McpServer!]! @listSize(slicingArguments: ["n"])
  }
`);

export const refsSchema = buildSubgraphSchema([{ typeDefs: refsTypeDefs }]);

const refs =
  (prefix: string) =>
  (_: unknown, { n }: { n: number }) =>
    Array.from({ length: n }, (_x, i) => ({ id: `${prefix}-${i + 1}` }));

/** Starts the subgraph on a free loopback port. */
export async function startRefsSubgraph(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = new ApolloServer({
    schema: buildSubgraphSchema([
      {
        typeDefs: refsTypeDefs,
        resolvers: {
          Query: { agentRefs: refs('ag'), repoRefs: refs('repo'), toolRefs: refs('tl'), serverRefs: refs('srv') },
        },
      },
    ]),
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  const { url } = await startStandaloneServer(server, { listen: { host: '127.0.0.1', port: 0 } });
  return { url, stop: () => server.stop() };
}
