/**
 * DataLoader discipline, measured on a real SQLite store wrapped in a counting Proxy: nested
 * lookups cost one store call per query level, whatever the number of items, and a federation
 * `_entities` call of 1,000 references is one store call for the agents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { countingStore, gql } from './helpers.ts';
import { wideBundle } from '../fixtures/wide-bundle.ts';

const counter = countingStore();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    bundle: wideBundle(1_000),
    wrapRegistry: (store) => counter.wrap(store),
    // Each query runs: the calls of an execution are measured, not those of a cached answer.
    env: { RESPONSE_CACHE_ENTRIES: '0' },
  });
});
afterAll(async () => {
  await t.close();
});

const NESTED = `query($n: Int) { agentSearch(first: $n, sorts: [{ field: NAME }]) { nodes {
  id name workspace { id name } creator { id name } usedTools { id toolName }
  relationships { count outgoing { relType to { id name } } incoming { from { id name } } } } } }`;

/** The store calls of one query, in the steady state (the org tree and membership caches already warm). */
async function callsFor(query: string, variables: Record<string, unknown>) {
  await gql(t, query, variables);
  counter.reset();
  const res = await gql(t, query, variables);
  expect(res.errors).toBeUndefined();
  return { res, calls: counter.calls() };
}

describe('store calls per GraphQL query', () => {
  it('a query for 50 agents with workspace, tools, creator and relationship ends makes one call per level', async () => {
    const { res, calls } = await callsFor(NESTED, { n: 50 });
    expect(res.data.agentSearch.nodes).toHaveLength(50);
    const wide = res.data.agentSearch.nodes.filter((n: { id: string }) => n.id.startsWith('ag-w'));
    expect(wide.length).toBeGreaterThan(40);
    expect(wide.every((n: { usedTools: unknown[] }) => n.usedTools.length === 2)).toBe(true);
    // access (the generation its org tree and memberships are kept by), the search, then one batch per nested level.
    expect(calls).toEqual({
      generation: 1,
      findArtifacts: 1,
      getUsers: 1,
      getRelationships: 1,
      getArtifacts: 1,
    });
  });

  it('makes the same calls for 5 agents as for 50', async () => {
    const five = await callsFor(NESTED, { n: 5 });
    const fifty = await callsFor(NESTED, { n: 50 });
    expect(five.res.data.agentSearch.nodes).toHaveLength(5);
    expect(five.calls).toEqual(fifty.calls);
  });

  it('_entities with 1,000 agent references is one store call for the agents', async () => {
    const representations = Array.from({ length: 1_000 }, (_, i) => ({
      __typename: 'Agent',
      id: `ag-w${String(i).padStart(4, '0')}`,
    }));
    const { res, calls } = await callsFor(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Agent { id name workspaceId } } }',
      { r: representations },
    );
    expect(res.data._entities).toHaveLength(1_000);
    expect(res.data._entities.every((e: { id: string } | null) => e !== null)).toBe(true);
    expect(calls).toEqual({ generation: 1, getArtifacts: 1 });
  });

  it('workspace subtrees cost the same calls for two workspaces as for four', async () => {
    const query = `query($id: ID!) { workspace(id: $id) { subtree { id artifactCount memberCount
      projects { id artifactCount } artifacts(first: 5) { totalCount nodes { id } } members { role user { id } } } } }`;
    const two = await callsFor(query, { id: 'ws-a-team' });
    const four = await callsFor(query, { id: 'ws-a' });
    expect(two.res.data.workspace.subtree).toHaveLength(2);
    expect(four.res.data.workspace.subtree).toHaveLength(4);
    expect(four.calls).toEqual(two.calls);
  });
});
