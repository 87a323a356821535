/**
 * Abuse through GraphQL (issue 11, findings 1, 4 and 7): queries whose cost was hidden from the
 * limits, the statistics field priced as 1, persisted queries shared across tenants, and a nested
 * document that overflowed the stack. Each is refused before it executes (HTTP 400) or isolated.
 * test/graphql/limits.test.ts and cost-model.test.ts pin the cost model itself.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function post(payload: object, user = 'u-admin', org = 'org-a') {
  const started = Date.now();
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await t.auth(user, org)), 'content-type': 'application/json' },
    payload,
  });
  return { status: res.statusCode, body: res.json(), ms: Date.now() - started, bytes: res.body.length };
}

const now = Math.floor(Date.now() / 1000);
const stats = `traceStats(input: { startTimeUnixSeconds: ${now - 366 * 86400}, endTimeUnixSeconds: ${now}, requestType: TIME_SERIES, compare: PREVIOUS_PERIOD,
  queries: [{ name: "q", measure: SPANS, groupBy: [USER], limit: 1000 }] }) { data { __typename } }`;

describe('finding 1 over GraphQL: traceStats priced by its answer', () => {
  it('refuses 4 aliases of skill { traceStats(compare) } before any runs (killed the process before)', async () => {
    const res = await post({ query: `{ skill(id: "sk-1") { a: ${stats} b: ${stats} c: ${stats} d: ${stats} } }` });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      limit: 'cost',
      max: 25_000,
    });
    expect(res.body.errors[0].extensions.value).toBeGreaterThan(4 * 2 * 1000 * 53);
    expect(res.body.data).toBeUndefined();
  });
});

describe('finding 4: cost bypass through defaults and introspection', () => {
  const nested = 'nodes { id usedTools { id usedBy { id usedTools { id } } } }';
  for (const [how, query] of [
    [
      'a variable default',
      `query($n: Int = 200) { ${Array.from({ length: 10 }, (_, i) => `a${i}: agentSearch(first: $n) { ${nested} }`).join(' ')} }`,
    ],
    ['an omitted first', `{ ${Array.from({ length: 10 }, (_, i) => `a${i}: agentSearch { ${nested} }`).join(' ')} }`],
    [
      'first: null',
      `{ ${Array.from({ length: 10 }, (_, i) => `a${i}: agentSearch(first: null) { ${nested} }`).join(' ')} }`,
    ],
  ] as const) {
    it(`prices a list by the page it will get with ${how}`, async () => {
      const res = await post({ query });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
    });
  }

  it('counts aliases and lists under __schema (a 107 KB introspection query answered 61 MB before)', async () => {
    const alias = (i: number) =>
      `s${i}: __schema { types { name fields { name args { name type { name } } type { name ofType { name } } } } }`;
    const res = await post({ query: `{ ${Array.from({ length: 25 }, (_, i) => alias(i)).join(' ')} }` });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
  });
});

describe('finding 7 over GraphQL', () => {
  it('keeps automatic persisted queries per organization: another tenant cannot probe a hash', async () => {
    const query = `{ viewer { orgId } } # ${Math.random()}`;
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const ext = { persistedQuery: { version: 1, sha256Hash } };
    expect((await post({ query, extensions: ext })).status).toBe(200);
    const same = await post({ extensions: ext });
    expect(same.body.data).toEqual({ viewer: { orgId: 'org-a' } });
    const other = await post({ extensions: ext }, 'u-b', 'org-b');
    expect(other.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('answers a hash that does not match its query with a request error, not internal_error', async () => {
    const res = await post({
      query: '{ viewer { orgId } }',
      extensions: { persistedQuery: { version: 1, sha256Hash: 'ab'.repeat(32) } },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', http: { status: 400 } });
  });

  it('refuses 50,000 nested selections with a nesting error, never a stack overflow', async () => {
    const res = await post({ query: `{ ${'a { '.repeat(50_000)}${'}'.repeat(50_000)} }` });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'GRAPHQL_PARSE_FAILED', limit: 'nesting', max: 64 });
    expect(JSON.stringify(res.body)).not.toMatch(/call stack/i);
  });
});
