/**
 * Automatic persisted queries: scoped per organization (a hash-only request never reveals another
 * tenant's query texts), with the in-memory cache and with a shared cache passed in as Redis is;
 * a hash that does not match its query is a 400 BAD_REQUEST, not an internal error.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgScopedCache, runInOrg } from '../../src/graphql/apq-scope.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { startReplica, type Replica } from './replica.ts';

/** A KeyValueCache over a Map, standing in for the Redis cache replicas share. */
function mapCache() {
  const map = new Map<string, string>();
  return {
    map,
    cache: {
      get: async (key: string) => map.get(key),
      set: async (key: string, value: string) => {
        map.set(key, value);
      },
      delete: async (key: string) => map.delete(key),
    },
  };
}

const shared = mapCache();
let t: TestApp;
let replicaA: Replica;
let replicaB: Replica;
beforeAll(async () => {
  t = await startTestApp();
  [replicaA, replicaB] = await Promise.all([
    startReplica(t, { apqCache: shared.cache }),
    startReplica(t, { apqCache: shared.cache }),
  ]);
});
afterAll(async () => {
  await Promise.all([replicaA.close(), replicaB.close()]);
  await t.close();
});

const CALLERS = { a: ['u-admin', 'org-a'], b: ['u-b', 'org-b'] } as const;

async function post(app: TestApp['app'], caller: keyof typeof CALLERS, payload: object) {
  const [user, org] = CALLERS[caller];
  const res = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await t.auth(user, org)), 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
  return { status: res.statusCode, body: res.json() };
}

function persisted(query: string) {
  const sha256Hash = createHash('sha256').update(query).digest('hex');
  return {
    register: { query, extensions: { persistedQuery: { version: 1, sha256Hash } } },
    hashOnly: { extensions: { persistedQuery: { version: 1, sha256Hash } } },
    sha256Hash,
  };
}

describe('persisted queries per organization', () => {
  it('org B cannot find a query org A registered (in-memory cache); A finds it', async () => {
    const q = persisted(`{ viewer { orgId } } # ${Math.random()}`);
    expect((await post(t.app, 'a', q.register)).body.data).toEqual({ viewer: { orgId: 'org-a' } });
    const probe = await post(t.app, 'b', q.hashOnly);
    expect(probe.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(probe.body.errors[0].extensions.http.status).toBe(probe.status);
    expect(probe.body.data).toBeUndefined();
    expect((await post(t.app, 'a', q.hashOnly)).body.data).toEqual({ viewer: { orgId: 'org-a' } });
  });

  it("with a shared cache: replicas share an organization's entries, never across organizations", async () => {
    const q = persisted(`{ viewer { orgId } } # ${Math.random()}`);
    expect((await post(replicaA.app, 'a', q.register)).status).toBe(200);
    expect((await post(replicaB.app, 'b', q.hashOnly)).body.errors[0].extensions.code).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
    expect((await post(replicaB.app, 'a', q.hashOnly)).body.data).toEqual({ viewer: { orgId: 'org-a' } });
    // B registers the same text: its own entry, answered for B
    expect((await post(replicaB.app, 'b', q.register)).body.data).toEqual({ viewer: { orgId: 'org-b' } });
    expect([...shared.map.keys()].filter((k) => k.endsWith(q.sha256Hash)).sort()).toEqual([
      `org-a:apq:${q.sha256Hash}`,
      `org-b:apq:${q.sha256Hash}`,
    ]);
  });

  it('the scoped cache keeps nothing outside a request and encodes organization ids', async () => {
    const { map, cache } = mapCache();
    const scoped = orgScopedCache(() => cache);
    await scoped.set('k', 'outside');
    expect(await scoped.get('k')).toBeUndefined();
    expect(map.size).toBe(0);
    await runInOrg('acme:apq', () => scoped.set('k', 'v'));
    expect([...map.keys()]).toEqual(['acme%3Aapq:k']);
    expect(await runInOrg('acme', () => scoped.get('apq:k'))).toBeUndefined();
    expect(await runInOrg('acme:apq', () => scoped.get('k'))).toBe('v');
  });
});

describe('persisted query errors', () => {
  it('a hash that does not match its query: HTTP 400 BAD_REQUEST', async () => {
    const res = await post(t.app, 'a', {
      query: '{ viewer { orgId } }',
      extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_REQUEST', http: { status: 400 } });
    expect(res.body.errors[0].message).toBe('provided sha does not match query');
  });

  it('an unsupported version: HTTP 400 BAD_REQUEST', async () => {
    const res = await post(t.app, 'a', {
      query: '{ viewer { orgId } }',
      extensions: { persistedQuery: { version: 2, sha256Hash: 'f'.repeat(64) } },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toEqual({ code: 'BAD_REQUEST', http: { status: 400 } });
  });
});
