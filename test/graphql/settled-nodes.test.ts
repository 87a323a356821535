/**
 * A list of artifacts loads what its query asks of its nodes before it answers (settle-nodes.ts),
 * so the nodes' edges resolve synchronously: on a real SQLite store wrapped to count (and, when
 * asked, fail) calls, the loads follow the query exactly (aliases, fragments, @skip), a failed load
 * fails only the fields that read it, and loaded users answer without a promise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/context.ts';
import type { User } from '../../src/domain/types.ts';
import { loadOrgUsers, orgUserOrNull } from '../../src/graphql/authorize.ts';
import { PeekLoader } from '../../src/loaders.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { wideBundle } from '../fixtures/wide-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { countingStore, gql } from './helpers.ts';

const counter = countingStore();
let failUsers = false;
/** The store, with `getUsers` failing while `failUsers` is set. */
function failing(store: RegistryStore): RegistryStore {
  return new Proxy(store, {
    get(object, prop, receiver) {
      const value = Reflect.get(object, prop, receiver) as unknown;
      if (prop === 'getUsers' && typeof value === 'function')
        return (...args: unknown[]) =>
          failUsers
            ? Promise.reject(new Error('the directory is down'))
            : (value as (...a: unknown[]) => unknown).apply(object, args);
      return value;
    },
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    bundle: wideBundle(60),
    wrapRegistry: (store) => counter.wrap(failing(store)),
    env: { RESPONSE_CACHE_ENTRIES: '0' },
  });
});
afterAll(async () => {
  await t.close();
});

async function callsFor(query: string, variables: Record<string, unknown> = {}) {
  await gql(t, query, variables);
  counter.reset();
  const res = await gql(t, query, variables);
  return { res, calls: counter.calls() };
}

describe('a list loads what its query asks of its nodes', () => {
  it('follows @skip: a skipped creator loads no user, an included one loads them in one call', async () => {
    const query = `query($skip: Boolean!) { agentSearch(first: 20, sorts: [{ field: NAME }]) {
      nodes { id creator @skip(if: $skip) { id } } } }`;
    const skipped = await callsFor(query, { skip: true });
    expect(skipped.res.errors).toBeUndefined();
    expect(skipped.res.data.agentSearch.nodes[0]).not.toHaveProperty('creator');
    expect(skipped.calls.getUsers).toBeUndefined();
    const included = await callsFor(query, { skip: false });
    expect(included.res.errors).toBeUndefined();
    expect(included.calls.getUsers).toBe(1);
    expect(included.res.data.agentSearch.nodes.filter((n: { creator: unknown }) => n.creator !== null).length).toBe(20);
  });

  it('reads aliases, named fragments on the interface and edges the same as plain nodes', async () => {
    const plain = await callsFor(`{ agentSearch(first: 20, sorts: [{ field: NAME }]) {
      nodes { id creator { id } relationships { count } } } }`);
    const dressed = await callsFor(`{ agentSearch(first: 20, sorts: [{ field: NAME }]) {
      edges { node { id ...Parts } } } } fragment Parts on Artifact { who: creator { id } rels: relationships { count } }`);
    expect(dressed.res.errors).toBeUndefined();
    expect(dressed.calls).toEqual(plain.calls);
    expect(dressed.calls.getUsers).toBe(1);
    expect(dressed.calls.getRelationships).toBe(1);
    expect(dressed.res.data.agentSearch.edges.map((e: { node: Record<string, unknown> }) => e.node)).toEqual(
      plain.res.data.agentSearch.nodes.map((n: { id: string; creator: unknown; relationships: unknown }) => ({
        id: n.id,
        who: n.creator,
        rels: n.relationships,
      })),
    );
  });

  it('a list of nodes without edges asked loads no edge', async () => {
    const { res, calls } = await callsFor('{ tools(first: 10) { totalCount nodes { id name } } }');
    expect(res.errors).toBeUndefined();
    expect(res.data.tools.nodes).toHaveLength(10);
    expect(calls.getUsers).toBeUndefined();
    expect(calls.getRelationships).toBeUndefined();
  });

  it('lists under a parent load their pages’ edges together: one call for a whole subtree', async () => {
    const { res, calls } = await callsFor(`{ workspace(id: "ws-a") { subtree { id
      artifacts(first: 10) { nodes { id creator { id } relationships { count } } } } } }`);
    expect(res.errors).toBeUndefined();
    const pages = res.data.workspace.subtree.map(
      (ws: { artifacts: { nodes: unknown[] } }) => ws.artifacts.nodes.length,
    );
    expect(pages.filter((n: number) => n > 0).length).toBeGreaterThan(1);
    expect(calls.getUsers).toBe(1);
    expect(calls.getRelationships).toBe(1);
  });

  it('a failed load fails the fields that read it, not the list', async () => {
    failUsers = true;
    try {
      const res = await gql(
        t,
        '{ agentSearch(first: 5, sorts: [{ field: NAME }]) { nodes { id name creator { id } } } }',
      );
      expect(res.data.agentSearch.nodes).toHaveLength(5);
      expect(res.data.agentSearch.nodes.every((n: { creator: unknown }) => n.creator === null)).toBe(true);
      expect(res.errors?.map((e) => e.path?.join('.')).sort()).toEqual(
        [0, 1, 2, 3, 4].map((i) => `agentSearch.nodes.${i}.creator`),
      );
    } finally {
      failUsers = false;
    }
  });
});

describe('loaded values answer synchronously', () => {
  const alice: User = { id: 'u-1', org_id: 'org-a' } as User;
  const bob: User = { id: 'u-2', org_id: 'org-b' } as User;

  it('PeekLoader shows what it loaded or was primed with, and forgets what it clears', async () => {
    const loader = new PeekLoader<User | null>(async (ids) => ids.map((id) => (id === 'u-1' ? alice : null)));
    expect(loader.peek('u-1')).toBeUndefined();
    await loader.loadMany(['u-1', 'u-9']);
    expect(loader.peek('u-1')).toBe(alice);
    expect(loader.peek('u-9')).toBeNull();
    loader.prime('u-2', bob);
    loader.prime('u-2', alice); // DataLoader keeps the first value; so does peek
    expect(loader.peek('u-2')).toBe(bob);
    expect(await loader.load('u-2')).toBe(bob);
    loader.prime('u-3', Promise.resolve(alice));
    expect(loader.peek('u-3')).toBeUndefined();
    loader.clear('u-1');
    expect(loader.peek('u-1')).toBeUndefined();
    loader.clearAll();
    expect(loader.peek('u-2')).toBeUndefined();
  });

  it('orgUserOrNull answers a loaded user without a promise, and only of the caller’s organization', async () => {
    const user = new PeekLoader<User | null>(async (ids) =>
      ids.map((id) => [alice, bob].find((u) => u.id === id) ?? null),
    );
    const ctx = { caller: { kind: 'user', orgId: 'org-a' }, loaders: { user } } as unknown as RequestContext;
    expect(orgUserOrNull(ctx, 'u-1')).toBeInstanceOf(Promise);
    await loadOrgUsers(ctx, ['u-1', 'u-2', 'u-3']);
    expect(orgUserOrNull(ctx, 'u-1')).toBe(alice);
    expect(orgUserOrNull(ctx, 'u-2')).toBeNull();
    expect(orgUserOrNull(ctx, 'u-3')).toBeNull();
    const service = {
      caller: { kind: 'service_account', orgId: 'org-a' },
      loaders: { user },
    } as unknown as RequestContext;
    await loadOrgUsers(service, ['u-4']);
    expect(user.peek('u-4')).toBeUndefined(); // a service account sees no people: nothing is loaded for it
    expect(orgUserOrNull(service, 'u-1')).toBeNull();
  });
});
