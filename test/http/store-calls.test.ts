/**
 * Store calls per REST read: each read makes a fixed number of store calls whatever its
 * page or subtree size, counted in the steady state (the org tree and membership caches warm), with the response cache off so
 * every request does the whole work. A per-item lookup (one call per artifact, per relationship,
 * per workspace) shows up as a count that grows with the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { countingStore } from '../graphql/helpers.ts';
import { wideBundle } from '../fixtures/wide-bundle.ts';

const counter = countingStore();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    bundle: wideBundle(300, 120),
    env: { RESPONSE_CACHE_ENTRIES: '0' },
    wrapRegistry: (store) => counter.wrap(store),
  });
});
afterAll(async () => {
  await t.close();
});

async function callsOf(method: 'GET' | 'POST', url: string, body?: object) {
  const request = async () =>
    t.app.inject({ method, url, headers: await t.auth('u-admin'), ...(body ? { payload: body } : {}) });
  await request();
  counter.reset();
  const res = await request();
  expect(res.statusCode).toBe(200);
  return { json: res.json<{ items?: unknown[]; artifacts?: unknown[] }>(), calls: counter.calls() };
}

describe('store calls per REST read', () => {
  it('the tool list: the same calls for a page of 5 as for a page of 100', async () => {
    const small = await callsOf('GET', '/mcp/v1/tools?limit=5');
    const large = await callsOf('GET', '/mcp/v1/tools?limit=100');
    expect(small.json.items).toHaveLength(5);
    expect(large.json.items).toHaveLength(100);
    expect(large.calls).toEqual(small.calls);
    // access (the generation its org tree and memberships are kept by) and the page, whose rows
    // carry their relationships ready: the admin reads every workspace their other ends are in.
    expect(large.calls).toEqual({
      generation: 1,
      findReadyArtifacts: 1,
    });
  });

  it('the agent search: the same calls for 5 agents as for 100', async () => {
    const small = await callsOf('POST', '/agent/v1/agents/search', { limit: 5 });
    const large = await callsOf('POST', '/agent/v1/agents/search', { limit: 100 });
    expect(large.json.items).toHaveLength(100);
    expect(large.calls).toEqual(small.calls);
    expect(large.calls.findReadyArtifacts).toBe(1);
    expect(large.calls.findArtifacts).toBeUndefined();
    // The rows carry their relationships and masked identities ready (the admin reads every end).
    expect(large.calls.getRelationshipsWithEnds).toBeUndefined();
    expect(large.calls.getIdentitiesOfAgents).toBeUndefined();
  });

  it('the workspace export: the same calls for a subtree of two workspaces as for the whole org', async () => {
    const two = await callsOf('GET', '/registry/v1/workspaces/ws-a-team/export');
    const all = await callsOf('GET', '/registry/v1/workspaces/ws-a/export');
    expect((all.json.artifacts ?? []).length).toBeGreaterThan((two.json.artifacts ?? []).length);
    // One call per kind of thing (counts: by workspace and by project), none per workspace or artifact.
    const calls = {
      generation: 1,
      listProjects: 1,
      listArtifacts: 1,
      countArtifacts: 2,
      countMembers: 1,
      getRelationshipsWithEnds: 1,
      getIdentitiesOfAgents: 1,
      getRepos: 1,
    };
    expect(all.calls).toEqual(calls);
    expect(two.calls).toEqual(calls);
  });
});

describe('store calls with the response cache on', () => {
  const cached = countingStore();
  let c: TestApp;
  beforeAll(async () => {
    c = await startTestApp({ wrapRegistry: (store) => cached.wrap(store) });
  });
  afterAll(async () => {
    await c.close();
  });

  it('a miss reads the registry generation once for the cache and the org tree together; a hit only reads it', async () => {
    const headers = await c.auth('u-admin');
    await c.app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=1', headers });
    cached.reset();
    const miss = await c.app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=2', headers });
    expect(miss.headers['x-cache']).toBeUndefined();
    expect(cached.calls().generation).toBe(1);
    cached.reset();
    const hit = await c.app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=2', headers });
    expect(hit.headers['x-cache']).toBe('hit');
    expect(cached.calls()).toEqual({ generation: 1 });
  });
});
