/**
 * Abuse through GraphQL: queries whose cost was hidden from the
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

describe('an unbounded statistics answer over GraphQL: traceStats priced by its answer', () => {
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

describe('statistics work hidden behind _entities (300 × 20 queries stalled a replica for 25 s)', () => {
  /** Counts the trace store's aggregations while `run` runs. */
  async function aggregationsDuring<T>(run: () => Promise<T>): Promise<{ result: T; aggregations: number }> {
    const store = t.traces as unknown as { aggregate: (...args: unknown[]) => Promise<unknown> };
    const original = store.aggregate.bind(store);
    let aggregations = 0;
    store.aggregate = (...args: unknown[]) => {
      aggregations++;
      return original(...args);
    };
    try {
      return { result: await run(), aggregations };
    } finally {
      delete (store as { aggregate?: unknown }).aggregate;
    }
  }
  const skills = (n: number) => Array.from({ length: n }, () => ({ __typename: 'Skill', id: 'sk-1' }));
  const query =
    'query($r: [_Any!]!, $i: TraceStatsInput!) { _entities(representations: $r) { ... on Skill { traceStats(input: $i) { meta { warnings } } } } }';

  const yearOf20 = (extra: object) => ({
    compare: 'PREVIOUS_PERIOD',
    startTimeUnixSeconds: now - 366 * 86400,
    endTimeUnixSeconds: now,
    queries: Array.from({ length: 20 }, (_, k) => ({
      name: `q${k}`,
      measure: 'LATENCY_P99',
      filters: [{ key: 'MODEL', op: 'NEQ', value: `m${k}` }],
      ...extra,
    })),
  });

  it('prices grouped queries with limit 0 at one group each: the attack as sent is refused by its cost', async () => {
    const attack = { requestType: 'TIME_SERIES', bucket: 'WEEK', ...yearOf20({ groupBy: ['USER'], limit: 0 }) };
    const res = await post({ query, variables: { r: skills(300), i: attack } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
    expect(res.body.errors[0].extensions.value).toBeGreaterThanOrEqual(300 * 20 * 53 * 2);
  });

  it('runs two of 300 scalar requests of 20 queries over a year with compare (cheap answers, heavy work), refuses the rest before any aggregation', async () => {
    const { result: res, aggregations } = await aggregationsDuring(() =>
      post({ query, variables: { r: skills(300), i: { requestType: 'SCALAR', ...yearOf20({}) } } }),
    );
    expect(res.status).toBe(400);
    const answered = (res.body.data._entities as ({ traceStats: unknown } | null)[]).filter(
      (e) => e?.traceStats != null,
    );
    expect(answered).toHaveLength(2); // 2 × 20 × 2 × 54 = 4,320 units, the whole budget
    // 20 distinct filters: 20 aggregations per window, two windows, two requests.
    expect(aggregations).toBe(2 * 20 * 2);
    expect(res.body.errors).toHaveLength(298);
    for (const error of res.body.errors)
      expect(error.extensions).toMatchObject({
        code: 'OPERATION_TOO_LARGE',
        http: { status: 400 },
        limit: 'trace_work',
        max: 4320,
      });
  });

  it('answers a page of 100 per-skill summaries (7 days, three queries: 6 units each)', async () => {
    const summary = {
      requestType: 'SCALAR',
      startTimeUnixSeconds: now - 7 * 86400,
      endTimeUnixSeconds: now,
      queries: [
        { name: 'invocations', measure: 'SKILL_INVOCATIONS' },
        { name: 'errors', measure: 'ERROR_RATE' },
        { name: 'p99', measure: 'LATENCY_P99' },
      ],
    };
    const res = await post({ query, variables: { r: skills(100), i: summary } });
    expect(res.body.errors).toBeUndefined();
    expect(res.status).toBe(200);
    expect(res.body.data._entities).toHaveLength(100);
    expect(res.body.data._entities.every((e: { traceStats: unknown }) => e.traceStats !== null)).toBe(true);
  });
});

describe('cost bypass through defaults and introspection', () => {
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

describe('deep nesting and persisted queries over GraphQL', () => {
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
