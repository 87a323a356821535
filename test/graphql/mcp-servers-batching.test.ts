/**
 * DataLoader discipline for MCP servers, on a real SQLite store wrapped in a counting Proxy: a list
 * of servers with their versions, workspaces and tools, tools with their servers, and `_entities`
 * cost one store call per level, the same for 2 servers as for 20.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { wideBundle } from '../fixtures/wide-bundle.ts';
import { countingStore, gql } from './helpers.ts';

const SERVERS = 20;
const WORKSPACES = ['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other'];
const server = (i: number) => `srv-${String(i).padStart(2, '0')}`;

/** 60 tools, three on each of the 20 servers. */
function bundle() {
  const b = wideBundle(0, 3 * SERVERS) as { artifacts: Record<string, unknown>[] };
  for (const a of b.artifacts) {
    const m = /^tl-w(\d+)$/.exec(String(a.id));
    if (m !== null) a.server_id = server(Number(m[1]) % SERVERS);
  }
  return b;
}

const counter = countingStore();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    bundle: bundle(),
    wrapRegistry: (store) => counter.wrap(store),
    // Each query runs: the calls of an execution are measured, not those of a cached answer.
    env: { RESPONSE_CACHE_ENTRIES: '0' },
  });
  for (let i = 0; i < SERVERS; i++) {
    for (const version of ['1.0.0', '1.1.0']) {
      await t.registry.publishMcpServer({
        id: server(i),
        org_id: 'org-a',
        workspace_id: WORKSPACES[i % WORKSPACES.length] as string,
        server: { name: `io.github.acme/${server(i)}`, version },
        status: 'active',
        published_at: version === '1.0.0' ? '2026-02-01T00:00:00Z' : '2026-02-02T00:00:00Z',
        created_by: 'u-admin',
      });
    }
  }
});
afterAll(async () => {
  await t.close();
});

/** The store calls of one query, in the steady state (the org tree and membership caches already warm). */
async function callsFor(query: string, variables: Record<string, unknown>) {
  await gql(t, query, variables);
  counter.reset();
  const res = await gql(t, query, variables);
  expect(res.errors).toBeUndefined();
  return { res, calls: counter.calls() };
}

const SERVERS_NESTED = `query($n: Int) { mcpServers(first: $n) { nodes { id workspace { id }
  versions { version isLatest } tools(first: 2) { totalCount nodes { id server { id } } } } } }`;

describe('store calls per GraphQL query on MCP servers', () => {
  it('servers with versions, workspace and tools (with their server) make one call per level', async () => {
    const { res, calls } = await callsFor(SERVERS_NESTED, { n: SERVERS });
    const nodes = res.data.mcpServers.nodes as { versions: unknown[]; tools: { totalCount: number } }[];
    expect(nodes).toHaveLength(SERVERS);
    expect(nodes.every((n) => n.versions.length === 2 && n.tools.totalCount === 3)).toBe(true);
    // The servers of the tools are the listed ones, already loaded.
    expect(calls).toEqual({
      generation: 1,
      listMcpServerVersions: 1,
      getMcpServerHistory: 1,
      listToolsOfServers: 1,
    });
    const two = await callsFor(SERVERS_NESTED, { n: 2 });
    expect(two.res.data.mcpServers.nodes).toHaveLength(2);
    expect(two.calls).toEqual(calls);
  });

  it('tools with their servers and the servers’ tools: one call for all the servers', async () => {
    const query = `query($n: Int) { tools(first: $n) { nodes { id server { id name tools(first: 1) { nodes { id } } } } } }`;
    const { res, calls } = await callsFor(query, { n: 60 });
    const nodes = res.data.tools.nodes as { server: { id: string } | null }[];
    expect(new Set(nodes.map((n) => n.server?.id)).size).toBeGreaterThanOrEqual(SERVERS);
    expect(calls).toEqual({ generation: 1, findArtifacts: 1, getMcpServers: 1, listToolsOfServers: 1 });
    expect((await callsFor(query, { n: 10 })).calls).toEqual(calls);
  });

  it('_entities with 20 server references is one store call for the servers', async () => {
    const r = Array.from({ length: SERVERS }, (_, i) => ({ __typename: 'McpServer', id: server(i) }));
    const { res, calls } = await callsFor(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on McpServer { id version } } }',
      { r },
    );
    expect(res.data._entities.map((e: { version: string }) => e.version)).toEqual(Array(SERVERS).fill('1.1.0'));
    expect(calls).toEqual({ generation: 1, getMcpServers: 1 });
  });
});
