/**
 * The deliberate server settings: operation limits (depth, aliases, cost), no batched requests,
 * automatic persisted queries, introspection only outside production.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Services } from '../../src/context.ts';
import { createApolloServer } from '../../src/graphql/server.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { gql } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function post(payload: unknown, user = 'u-admin') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await t.auth(user)), 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
  return { status: res.statusCode, headers: res.headers, body: res.json() };
}

describe('operation limits', () => {
  it('refuses a query deeper than the limit', async () => {
    const deep =
      '{ agent(id: "ag-1") { workspace { parent { parent { parent { parent { parent { parent { parent { parent { parent { parent { parent { id } } } } } } } } } } } } } }';
    const res = await gql(t, deep);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'depth' });
  });

  it('refuses too many aliases', async () => {
    const res = await gql(t, `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: viewer { orgId }`).join(' ')} }`);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'aliases' });
  });

  it('refuses a query whose estimated cost is over the limit, counting first and variables', async () => {
    const query =
      'query($n: Int) { agentSearch(first: $n) { nodes { versions { usedTools { usedBy { usedTools { id } } } } } } }';
    const res = await gql(t, query, { n: 100 });
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
    const small = await gql(t, query, { n: 1 });
    expect(small.status).toBe(200);
  });

  it('a 50-agent query with its edges stays within the limits', async () => {
    const res = await gql(
      t,
      `{ agentSearch(first: 50) { nodes { id workspace { id } usedTools { id } creator { id }
      relationships { outgoing { to { id } } incoming { from { id } } } } } }`,
    );
    expect(res.errors).toBeUndefined();
  });
});

describe('HTTP settings', () => {
  it('refuses batched requests', async () => {
    const res = await post([{ query: '{ viewer { orgId } }' }, { query: '{ viewer { orgId } }' }]);
    expect(res.status).toBe(400);
  });

  it('supports automatic persisted queries', async () => {
    const query = '{ viewer { orgId } }';
    const persistedQuery = { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') };
    const miss = await post({ extensions: { persistedQuery } });
    expect(miss.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const register = await post({ query, extensions: { persistedQuery } });
    expect(register.body.data).toEqual({ viewer: { orgId: 'org-a' } });
    const hit = await post({ extensions: { persistedQuery } });
    expect(hit.body.data).toEqual({ viewer: { orgId: 'org-a' } });
  });

  it('sends no cache-control policy (the cache-control plugin is off)', async () => {
    const res = await post({ query: '{ viewer { orgId } }' });
    expect(res.headers['cache-control'] ?? '').not.toMatch(/max-age/);
  });

  it('allows introspection outside production', async () => {
    const res = await gql(t, '{ __schema { queryType { name } } }');
    expect(res.data.__schema.queryType.name).toBe('Query');
  });

  it('answers the standard introspection query (what GraphiQL and codegen send) without errors', async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const res = await gql(t, getIntrospectionQuery());
    expect(res.errors).toBeUndefined();
    const sort = res.data.__schema.types.find((type: { name: string }) => type.name === 'AgentSort');
    expect(
      sort.inputFields.map((f: { name: string; defaultValue: string | null }) => [f.name, f.defaultValue]),
    ).toEqual([
      ['field', null],
      ['direction', null],
    ]);
  });
});

describe('production', () => {
  it('turns introspection off', async () => {
    // GRAPHQL_EXPLORER (introspection and the explorer) defaults to off in production.
    const production = loadConfig({
      NODE_ENV: 'production',
      AUTH_AUDIENCE: 'gateway',
      AUTH_ISSUERS: 'https://idp.example',
      AUTH_JWKS_URL: 'https://idp.example/jwks',
    });
    expect(production.graphqlExplorer).toBe(false);
    const config = { ...t.config, nodeEnv: 'production', graphqlExplorer: production.graphqlExplorer };
    const services = { config, registry: t.registry } as Services;
    const apollo = createApolloServer(services, {});
    await apollo.start();
    try {
      const res = await apollo.executeOperation({ query: '{ __schema { queryType { name } } }' });
      expect(res.body.kind === 'single' && res.body.singleResult.errors?.[0]?.extensions?.code).toBe(
        'GRAPHQL_VALIDATION_FAILED',
      );
    } finally {
      await apollo.stop();
    }
  });
});
