/**
 * The authorization matrix of DESIGN §6, generated from one table: every operation that takes a
 * resource by id, on every transport (REST, GraphQL root fields, federation `_entities`), for every
 * kind of caller, against targets that are readable, discoverable but unreadable (same organization),
 * of another organization, and absent. Expected: readable -> the resource; same organization but
 * unreadable -> 403 access_denied; another organization or absent -> 404 not_found. Callers that fail
 * authentication get their 401/403 code whatever the target. OTLP ingestion is the same matrix on
 * write access: a span sent to a workspace the caller may write to is stored, to any other workspace
 * rejected in the partial-success answer, and a caller who may write nowhere gets 403 before its
 * body is read. Lists (REST and GraphQL, with nested relationship edges) show exactly the readable
 * resources; the fixture has a relationship that crosses into a workspace some callers cannot read.
 */
import { describe, expect, it } from 'vitest';
import {
  CALLERS,
  END,
  ORG_A,
  TEAM,
  bundle,
  expectedWrite,
  graph,
  ingest,
  matrixApp,
  rest,
  runMatrix,
  useMatrixApp,
  type Operation,
} from './matrix.ts';

const STATS = {
  start_time_unix_seconds: END - 86400,
  end_time_unix_seconds: END,
  request_type: 'scalar',
  queries: [{ name: 'n', measure: 'spans' }],
};
const workspaces = ['ws-a-team', 'ws-a-sub', 'ws-a-other', 'ws-b', 'ws-none'];
const agents = ['ag-1', 'ag-2', 'ag-3', 'ag-b1', 'ag-none'];
const skills = ['sk-1', 'sk-2', 'sk-b1', 'sk-none'];
const repos = ['repo-a-team', 'repo-a-other', 'repo-b', 'repo-none'];

const OPERATIONS: Operation[] = [
  {
    name: 'REST workspace export',
    targets: workspaces,
    call: (h, id) => rest('GET', `/registry/v1/workspaces/${id}/export`, h),
  },
  {
    name: 'REST profile image',
    targets: agents,
    call: (h, id) => rest('GET', `/agent/v1/agents/${id}/profile-image`, h),
  },
  {
    name: 'REST trace statistics',
    targets: skills,
    call: (h, id) => rest('POST', `/skill/v1/skills/${id}/traces/stats/query`, h, STATS),
  },
  {
    name: 'REST agent trace statistics',
    targets: agents,
    call: (h, id) => rest('POST', `/agent/v1/agents/${id}/traces/stats/query`, h, STATS),
  },
  {
    name: 'GraphQL workspace(id)',
    targets: workspaces,
    call: (h, id) => graph(h, `{ workspace(id: "${id}") { id } }`, (d) => d.workspace),
  },
  {
    name: 'GraphQL agent(id)',
    targets: agents,
    call: (h, id) => graph(h, `{ agent(id: "${id}") { id } }`, (d) => d.agent),
  },
  {
    name: 'GraphQL skill(id)',
    targets: skills,
    call: (h, id) => graph(h, `{ skill(id: "${id}") { id } }`, (d) => d.skill),
  },
  {
    name: 'federation _entities Agent',
    targets: agents,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "Agent", id: "${id}"}]) { ... on Agent { id } } }`,
        (d) => (d._entities as unknown[])[0],
      ),
  },
  {
    name: 'federation _entities Workspace',
    targets: workspaces,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "Workspace", id: "${id}"}]) { ... on Workspace { id } } }`,
        (d) => (d._entities as unknown[])[0],
      ),
  },
  {
    name: 'GraphQL repo(id)',
    targets: repos,
    call: (h, id) => graph(h, `{ repo(id: "${id}") { id } }`, (d) => d.repo),
  },
  {
    name: 'federation _entities Repo',
    targets: repos,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "Repo", id: "${id}"}]) { ... on Repo { id } } }`,
        (d) => (d._entities as unknown[])[0],
      ),
  },
  {
    name: 'OTLP ingestion',
    targets: [...ORG_A, 'ws-b', 'ws-none'],
    call: ingest,
    expects: expectedWrite,
  },
];

useMatrixApp();
runMatrix('authorization matrix (DESIGN §6)', OPERATIONS);

/** The ids of the bundle's artifacts (any version) of this kind in these workspaces, sorted. */
function readable(kind: string, reads: string[]): string[] {
  const ids = bundle.artifacts.filter((a) => a.kind === kind && reads.includes(a.workspace_id)).map((a) => a.id);
  return [...new Set(ids)].sort();
}

describe('lists and nested edges show exactly the readable resources', () => {
  for (const caller of CALLERS.filter((c) => c.fails === undefined)) {
    it(`as ${caller.name}`, async () => {
      const reads = caller.reads ?? [];
      const headers = { authorization: await caller.header(), 'content-type': 'application/json' };
      const tools = await matrixApp().app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=100', headers });
      const search = await matrixApp().app.inject({
        method: 'POST',
        url: '/agent/v1/agents/search',
        headers,
        payload: {},
      });
      const graph = await matrixApp().app.inject({
        method: 'POST',
        url: '/graphql',
        headers,
        payload: {
          query:
            '{ agentSearch(first: 50) { nodes { id relationships { outgoing { to { id } } } usedTools { id } } } tools(first: 100) { nodes { id } } }',
        },
      });
      const items = (r: typeof tools) =>
        r
          .json<{ items: { id: string }[] }>()
          .items.map((i) => i.id)
          .sort();
      expect([tools.statusCode, search.statusCode, graph.statusCode]).toEqual([200, 200, 200]);
      expect(items(tools), 'REST tools').toEqual(readable('tool', reads));
      expect(items(search), 'REST agent search').toEqual(readable('agent', reads));
      const data = graph.json<{
        data: {
          agentSearch: {
            nodes: { id: string; relationships: { outgoing: { to: { id: string } }[] }; usedTools: { id: string }[] }[];
          };
          tools: { nodes: { id: string }[] };
        };
      }>().data;
      expect(data.tools.nodes.map((n) => n.id).sort(), 'GraphQL tools').toEqual(readable('tool', reads));
      expect(data.agentSearch.nodes.map((n) => n.id).sort(), 'GraphQL agentSearch').toEqual(readable('agent', reads));
      const visible = new Set(bundle.artifacts.filter((a) => reads.includes(a.workspace_id)).map((a) => a.id));
      for (const agent of data.agentSearch.nodes) {
        const edges = bundle.relationships.filter((r) => r.from.id === agent.id && visible.has(r.to.id));
        expect(agent.relationships.outgoing.map((r) => r.to.id).sort(), `edges of ${agent.id}`).toEqual(
          edges.map((r) => r.to.id).sort(),
        );
        expect(agent.usedTools.map((x) => x.id).sort(), `usedTools of ${agent.id}`).toEqual(
          edges
            .filter((r) => r.rel_type === 'uses_tool')
            .map((r) => r.to.id)
            .sort(),
        );
      }
    });
  }

  it('the fixture crosses: an edge some callers see and others do not', () => {
    const ag1 = bundle.relationships.filter((r) => r.from.id === 'ag-1').map((r) => r.to.id);
    expect(ag1).toContain('tl-4');
    expect(readable('tool', TEAM)).not.toContain('tl-4');
    expect(readable('agent', TEAM)).toContain('ag-1');
  });
});
