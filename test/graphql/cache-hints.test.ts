/**
 * `Cache-Control` of GraphQL answers: public only for queries every caller gets the same answer
 * to (the insight schemas, the SDL), `no-store` for everything that depends on the caller or on
 * the registry's current state, and for mutations and errors; cache hits are marked the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_MAX_AGE_S } from '../../src/graphql/cache-hints.ts';
import { listInsightSchemas } from '../../src/skills/insight-schemas.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

async function cacheControl(query: string, user = 'u-admin') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await t.auth(user)), 'content-type': 'application/json' },
    payload: JSON.stringify({ query }),
  });
  return { status: res.statusCode, header: res.headers['cache-control'], json: res.json() };
}

const PUBLIC = `public, max-age=${PUBLIC_MAX_AGE_S}`;
const KINDS = listInsightSchemas().items.map((s) => s.name);

describe('GraphQL Cache-Control', () => {
  it('marks the insight schemas and the SDL public, twice (a cache hit too)', async () => {
    for (let i = 0; i < 2; i++) {
      const schemas = await cacheControl('{ insightSchemas { name } }');
      expect(schemas.status).toBe(200);
      expect((schemas.json.data.insightSchemas as { name: string }[]).map((s) => s.name)).toEqual(KINDS);
      expect(schemas.header).toBe(PUBLIC);
    }
    expect((await cacheControl('{ __typename }')).header).toBe(PUBLIC);
    // The SDL: the same for every caller, yet production hides it from anonymous ones (no shared cache).
    expect((await cacheControl('{ _service { sdl } }')).header).toBe('no-store');
    const viaFragments = await cacheControl(
      'query { ...F ... on Query { __typename } } fragment F on Query { insightSchemas { name } }',
    );
    expect(viaFragments.status).toBe(200);
    expect(viaFragments.header).toBe(PUBLIC);
  });

  it('marks a caller-dependent answer no-store, even beside a public field', async () => {
    const tools = await cacheControl('{ tools(first: 2) { nodes { id } } }');
    expect(tools.status).toBe(200);
    expect(tools.header).toBe('no-store');
    expect((await cacheControl('{ insightSchemas { name } viewer { orgId } }')).header).toBe('no-store');
    const nested = await cacheControl('{ ...F } fragment F on Query { insightSchemas { name } viewer { orgId } }');
    expect(nested.status).toBe(200);
    expect(nested.header).toBe('no-store');
  });

  it('marks errors no-store', async () => {
    const bad = await cacheControl('{ insightSchemas { nope } }');
    expect(bad.json.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(bad.header).toBe('no-store');
  });
});
