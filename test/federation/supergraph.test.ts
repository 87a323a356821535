/**
 * This service as a Federation v2 subgraph: composed with a second subgraph (reviews, budgets, CI
 * status and approvals extending Agent, Workspace, Repo and McpServer) by @apollo/composition, and queried through @apollo/gateway
 * in-process, with both subgraphs on loopback and the caller's Authorization forwarded (the gateway
 * cannot enforce `@authenticated`/`@policy`, so its copy of our SDL leaves them out: router-only.ts).
 */
import { composeServices } from '@apollo/composition';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import net, { type AddressInfo } from 'node:net';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { typeDefsForApolloGateway } from './router-only.ts';

const reviewsTypeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Agent @key(fields: "id") {
    id: ID!
    reviews: [Review!]!
  }
  type Workspace @key(fields: "id") {
    id: ID!
    budget: Budget
  }
  type Repo @key(fields: "id") {
    id: ID!
    ciStatus: String!
  }
  type McpServer @key(fields: "id") {
    id: ID!
    approvedBy: String!
  }
  type Review {
    rating: Int!
    body: String!
  }
  type Budget {
    monthlyUsd: Float!
  }
  type Query {
    featuredAgents: [Agent]!
    featuredRepos: [Repo]!
    featuredServers: [McpServer]!
  }
`);

const reviewsResolvers = {
  Query: {
    featuredAgents: () => [{ id: 'ag-1' }, { id: 'ag-b1' }],
    featuredRepos: () => [{ id: 'repo-a-team' }, { id: 'repo-a-other' }, { id: 'repo-b' }],
    featuredServers: () => [{ id: 'srv-github' }, { id: 'srv-jira' }, { id: 'srv-mail' }],
  },
  McpServer: { approvedBy: ({ id }: { id: string }) => `security:${id}` },
  Repo: { ciStatus: ({ id }: { id: string }) => `green:${id}` },
  Agent: { reviews: ({ id }: { id: string }) => [{ rating: id.length, body: `review of ${id}` }] },
  Workspace: { budget: ({ id }: { id: string }) => ({ monthlyUsd: id.length * 100 }) },
};

interface GatewayContext {
  authorization: string;
}

let t: TestApp;
let reviews: ApolloServer;
let gateway: ApolloServer<GatewayContext>;
let composed: ReturnType<typeof composeServices>;

/** A free loopback port, so the CPU-heavy composition and gateway start run before the app. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  // The app sheds load when its event loop lags (DESIGN §7): compose and plan before it starts.
  reviews = new ApolloServer({
    schema: buildSubgraphSchema([{ typeDefs: reviewsTypeDefs, resolvers: reviewsResolvers }]),
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  const { url: reviewsUrl } = await startStandaloneServer(reviews, { listen: { host: '127.0.0.1', port: 0 } });
  const port = await freePort();
  composed = composeServices([
    { name: 'registry', typeDefs: typeDefsForApolloGateway(), url: `http://127.0.0.1:${port}/graphql` },
    { name: 'reviews', typeDefs: reviewsTypeDefs, url: reviewsUrl },
  ]);
  gateway = new ApolloServer<GatewayContext>({
    gateway: new ApolloGateway({
      supergraphSdl: composed.supergraphSdl as string,
      buildService: ({ url }) =>
        new RemoteGraphQLDataSource<GatewayContext>({
          ...(url !== undefined ? { url } : {}),
          willSendRequest({ request, context }) {
            if (context.authorization) request.http?.headers.set('authorization', context.authorization);
          },
        }),
    }),
  });
  await gateway.start();
  t = await startTestApp();
  const servers = [
    ['srv-github', 'ws-a-team', 'org-a'],
    ['srv-jira', 'ws-a-other', 'org-a'],
    ['srv-mail', 'ws-b', 'org-b'],
  ] as const;
  for (const [id, workspace, org] of servers)
    await t.registry.publishMcpServer({
      id,
      org_id: org,
      workspace_id: workspace,
      server: { name: `io.github.${org}/${id}`, version: '1.0.0' },
      status: 'active',
      published_at: '2026-02-01T00:00:00Z',
      created_by: 'u-admin',
    });
  await t.app.listen({ host: '127.0.0.1', port });
});

afterAll(async () => {
  await gateway.stop();
  await reviews.stop();
  await t.close();
});

async function viaGateway(query: string, user = 'u-admin', org = 'org-a') {
  const { authorization } = await t.auth(user, org);
  const res = await gateway.executeOperation({ query }, { contextValue: { authorization } });
  if (res.body.kind !== 'single') throw new Error('expected a single result');
  return res.body.singleResult;
}

describe('supergraph of this subgraph and a reviews subgraph', () => {
  it('composes without errors', () => {
    expect(composed.errors).toBeUndefined();
    expect(composed.supergraphSdl).toContain('type Agent');
  });

  it('answers a query that starts here and crosses into the reviews subgraph', async () => {
    const result = await viaGateway(`{
      agentSearch(first: 10) {
        nodes { id name reviews { rating body } workspace { id name budget { monthlyUsd } } }
      }
    }`);
    expect(result.errors).toBeUndefined();
    const nodes = (
      result.data as {
        agentSearch: { nodes: { id: string; reviews: unknown[]; workspace: { id: string; budget: unknown } }[] };
      }
    ).agentSearch.nodes;
    expect(nodes.map((n) => n.id).sort()).toEqual(['ag-1', 'ag-2', 'ag-3']);
    const ag1 = nodes.find((n) => n.id === 'ag-1');
    expect(ag1?.reviews).toEqual([{ rating: 4, body: 'review of ag-1' }]);
    expect(ag1?.workspace).toMatchObject({ id: 'ws-a-team', budget: { monthlyUsd: 900 } });
  });

  it('resolves entities of another subgraph through _entities here, with the same authorization', async () => {
    const result = await viaGateway('{ featuredAgents { id name workspace { id } reviews { rating } } }');
    const featured = (result.data as { featuredAgents: ({ id: string; name: string } | null)[] }).featuredAgents;
    expect(featured[0]).toMatchObject({ id: 'ag-1', name: expect.any(String), workspace: { id: 'ws-a-team' } });
    // ag-b1 belongs to org-b: the registry subgraph refuses it as not_found, the gateway gets null.
    expect(featured[1]?.name ?? null).toBeNull();
    const codes = (result.errors ?? []).map((e) => e.extensions?.code);
    expect(codes).toContain('not_found');
  });

  it('a repository crosses both ways: extended by the other subgraph, resolved here with the same authorization', async () => {
    const here = await viaGateway('{ agent(id: "ag-2") { repo { id name ciStatus } } }', 'u-viewer');
    expect(here.errors).toBeUndefined();
    expect(here.data).toEqual({
      agent: { repo: { id: 'repo-a-team', name: 'team-agents', ciStatus: 'green:repo-a-team' } },
    });
    const there = await viaGateway('{ featuredRepos { id name artifacts { nodes { id } } } }', 'u-viewer');
    const repos = (there.data as { featuredRepos: ({ name: string | null; artifacts?: unknown } | null)[] })
      .featuredRepos;
    expect(repos[0]).toEqual({ id: 'repo-a-team', name: 'team-agents', artifacts: { nodes: [{ id: 'ag-2' }] } });
    // repo-a-other's workspace is not the viewer's (access_denied), repo-b is another org's (not_found).
    expect(repos.slice(1).map((r) => r?.name ?? null)).toEqual([null, null]);
    const codes = (there.errors ?? []).map((e) => e.extensions?.code).sort();
    expect(codes).toEqual(['access_denied', 'not_found']);
  });

  it('an MCP server crosses both ways: extended by the other subgraph, resolved here with the same authorization', async () => {
    const here = await viaGateway('{ tool(id: "tl-1") { server { id name approvedBy } } }', 'u-viewer');
    expect(here.errors).toBeUndefined();
    expect(here.data).toEqual({
      tool: { server: { id: 'srv-github', name: 'io.github.org-a/srv-github', approvedBy: 'security:srv-github' } },
    });
    const there = await viaGateway('{ featuredServers { id name version approvedBy } }', 'u-viewer');
    const servers = (there.data as { featuredServers: ({ name: string | null } | null)[] }).featuredServers;
    expect(servers[0]).toEqual({
      id: 'srv-github',
      name: 'io.github.org-a/srv-github',
      version: '1.0.0',
      approvedBy: 'security:srv-github',
    });
    // srv-jira's workspace is not the viewer's (access_denied), srv-mail is another org's (not_found).
    expect(servers.slice(1).map((r) => r?.name ?? null)).toEqual([null, null]);
    expect((there.errors ?? []).map((e) => e.extensions?.code).sort()).toEqual(['access_denied', 'not_found']);
  });

  it('a viewer sees its own subtree only, through the gateway too', async () => {
    const result = await viaGateway('{ agentSearch { nodes { id reviews { rating } } } }', 'u-viewer');
    const ids = (result.data as { agentSearch: { nodes: { id: string }[] } }).agentSearch.nodes.map((n) => n.id).sort();
    expect(ids).toEqual(['ag-1', 'ag-2']);
  });
});
