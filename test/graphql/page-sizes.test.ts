/**
 * The page sizes the cost analysis prices paged lists by (limits/page-sizes.ts) are the pages the
 * fields really serve: without `first` each answers its default, with a huge `first` its maximum.
 * A fixture with more than 200 of everything makes both visible.
 */
import { GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_SIZES } from '../../src/graphql/limits/page-sizes.ts';
import { buildRegistrySubgraph } from '../../src/graphql/schema.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { gql, type GraphqlResponse } from './helpers.ts';
import { wideBundle } from '../fixtures/wide-bundle.ts';
import { insightRecord } from '../fixtures/insights.ts';

const MANY = 210;
const T0 = '2026-01-01T00:00:00Z';

/**
 * 210 agents (project proj-a1 of ws-a-team, repository repo-a-team, by u-admin), 210 tools on
 * distinct servers, 210 more tools on the server srv-many, 210 more users.
 */
function manyBundle() {
  const bundle = wideBundle(MANY, MANY) as { artifacts: Record<string, unknown>[]; users: Record<string, unknown>[] };
  for (const a of bundle.artifacts) {
    const id = String(a.id);
    if (id.startsWith('ag-w'))
      Object.assign(a, {
        workspace_id: 'ws-a-team',
        project_id: 'proj-a1',
        repo_id: 'repo-a-team',
        created_by: 'u-admin',
      });
    if (id.startsWith('tl-w')) a.server_id = `srv-${id}`;
  }
  const tool = bundle.artifacts.find((a) => a.id === 'tl-w0000') as Record<string, unknown>;
  for (let i = 0; i < MANY; i++)
    bundle.artifacts.push({
      ...tool,
      id: `tl-m${String(i).padStart(3, '0')}`,
      name: `many ${i}`,
      server_id: 'srv-many',
    });
  for (let i = 0; i < MANY; i++)
    bundle.users.push({ id: `u-many-${String(i).padStart(3, '0')}`, org_id: 'org-a', created_at: T0, updated_at: T0 });
  return bundle;
}

/** For each paged field: a query of its page, with `$first` as its `first`, and where its nodes are. */
const PAGES: Record<string, { query: string; nodes: (data: GraphqlResponse['data']) => unknown[] }> = {
  'Query.agentSearch': {
    query: 'query($first: Int) { p: agentSearch(first: $first) { nodes { id } } }',
    nodes: (d) => d.p.nodes,
  },
  'Query.tools': { query: 'query($first: Int) { p: tools(first: $first) { nodes { id } } }', nodes: (d) => d.p.nodes },
  'Query.toolAggregate': {
    query: 'query($first: Int) { p: toolAggregate(groupBy: [SERVER_ID], first: $first) { nodes { count } } }',
    nodes: (d) => d.p.nodes,
  },
  'Query.users': { query: 'query($first: Int) { p: users(first: $first) { nodes { id } } }', nodes: (d) => d.p.nodes },
  'Workspace.artifacts': {
    query: 'query($first: Int) { workspace(id: "ws-a-team") { p: artifacts(first: $first) { nodes { id } } } }',
    nodes: (d) => d.workspace.p.nodes,
  },
  'Project.artifacts': {
    query: 'query($first: Int) { project(id: "proj-a1") { p: artifacts(first: $first) { nodes { id } } } }',
    nodes: (d) => d.project.p.nodes,
  },
  'Repo.artifacts': {
    query: 'query($first: Int) { repo(id: "repo-a-team") { p: artifacts(first: $first) { nodes { id } } } }',
    nodes: (d) => d.repo.p.nodes,
  },
  'User.artifacts': {
    query: 'query($first: Int) { user(id: "u-admin") { p: artifacts(first: $first) { nodes { id } } } }',
    nodes: (d) => d.user.p.nodes,
  },
  'Query.mcpServers': {
    query: 'query($first: Int) { p: mcpServers(first: $first) { nodes { id } } }',
    nodes: (d) => d.p.nodes,
  },
  'McpServer.tools': {
    query: 'query($first: Int) { mcpServer(id: "srv-many") { p: tools(first: $first) { nodes { id } } } }',
    nodes: (d) => d.mcpServer.p.nodes,
  },
  'Skill.insights': {
    query: 'query($first: Int) { skill(id: "sk-1") { p: insights(first: $first) { nodes { id } } } }',
    nodes: (d) => d.skill.p.nodes,
  },
  'Agent.insights': {
    query: 'query($first: Int) { agent(id: "ag-1") { p: insights(first: $first) { nodes { id } } } }',
    nodes: (d) => d.agent.p.nodes,
  },
  'Workspace.insights': {
    query: 'query($first: Int) { workspace(id: "ws-a-team") { p: insights(first: $first) { nodes { id } } } }',
    nodes: (d) => d.workspace.p.nodes,
  },
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ bundle: manyBundle() });
  for (let i = 0; i <= MANY; i++) {
    const id = i === MANY ? 'srv-many' : `srv-${String(i).padStart(3, '0')}`;
    await t.registry.publishMcpServer({
      id,
      org_id: 'org-a',
      workspace_id: 'ws-a-team',
      server: { name: `io.github.acme/${id}`, version: '1.0.0' },
      status: 'active',
      published_at: T0,
      created_by: 'u-admin',
    });
  }
  // 210 insights about sk-1 and 210 about ag-1, all in ws-a-team.
  const insights = Array.from({ length: MANY }, (_, i) => [
    insightRecord(`in-s-${i}`, 'usage_summary', { type: 'skill', id: 'sk-1' }, 'ws-a-team', 1_790_000_000 - i * 3600),
    insightRecord(`in-a-${i}`, 'cost_spike', { type: 'agent', id: 'ag-1' }, 'ws-a-team', 1_790_000_000 - i * 3600),
  ]).flat();
  await t.registry.insights.recordInsights(insights, Date.now());
});
afterAll(async () => {
  await t.close();
});

describe('page sizes of the cost analysis', () => {
  it('list every paged field of the schema', () => {
    const schema = buildRegistrySubgraph();
    const paged = Object.values(schema.getTypeMap())
      .filter((type): type is GraphQLObjectType => type instanceof GraphQLObjectType)
      .flatMap((type) =>
        Object.values(type.getFields())
          .filter((f) => f.args.some((a) => a.name === 'first'))
          .map((f) => `${type.name}.${f.name}`),
      );
    expect(Object.keys(PAGE_SIZES).sort()).toEqual(paged.sort());
    expect(Object.keys(PAGES).sort()).toEqual(paged.sort());
  });

  for (const [field, page] of Object.entries(PAGES)) {
    it(`${field}: the default page without first (or first: null), the maximum for a larger first`, async () => {
      const sizes = PAGE_SIZES[field];
      if (sizes === undefined) throw new Error(`${field} has no page size`);
      for (const variables of [{}, { first: null }]) {
        const res = await gql(t, page.query, variables);
        expect(res.errors).toBeUndefined();
        expect(page.nodes(res.data)).toHaveLength(sizes.default);
      }
      const large = await gql(t, page.query, { first: 100_000 });
      expect(large.errors).toBeUndefined();
      expect(page.nodes(large.data)).toHaveLength(sizes.max);
    });
  }
});
