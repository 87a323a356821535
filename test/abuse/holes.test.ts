/**
 * Smaller holes, each through HTTP: router rejections and
 * offsets as problems, the deadline over synchronous work, the user directory closed to service
 * accounts, and the rate limit of operations 3 and 6 shared with the GraphQL fields that run them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const gql = async (app: TestApp, query: string, headers: Record<string, string>) =>
  app.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: { query },
  });

describe('errors outside the catalogue', () => {
  it('answers an over-long path parameter and a bad percent-encoding with problem+json, before authentication', async () => {
    t = await startTestApp();
    const long = expectProblem(
      await t.app.inject({ method: 'GET', url: `/agent/v1/agents/${'a'.repeat(600)}/profile-image` }),
      400,
      'invalid_request',
    );
    expect(long.detail).toBe('a path parameter is longer than 500 characters');
    expect(long.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const bad = expectProblem(
      await t.app.inject({ method: 'GET', url: '/agent/v1/agents/%/profile-image' }),
      400,
      'invalid_request',
    );
    expect(bad.detail).toBe('the URL path has an invalid percent-encoding');
  });

  it('answers offsets no store can represent with 400 invalid_query, and the largest one with an empty page', async () => {
    t = await startTestApp();
    const h = await t.auth('u-admin');
    for (const url of ['/registry/v1/users?offset=9223372036854775807', '/mcp/v1/tools?offset=9223372036854775807']) {
      expect(expectProblem(await t.app.inject({ method: 'GET', url, headers: h }), 400, 'invalid_query').detail).toBe(
        'query parameter offset must be <= 9007199254740991',
      );
    }
    for (const url of ['/registry/v1/users?offset=9007199254740991', '/mcp/v1/tools?offset=9007199254740991']) {
      const res = await t.app.inject({ method: 'GET', url, headers: h });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().items).toEqual([]);
      expect(res.json().page.offset).toBe(9007199254740991);
    }
    const search = await t.app.inject({
      method: 'POST',
      url: '/agent/v1/agents/search',
      headers: h,
      payload: { offset: 2 ** 63 },
    });
    expect(expectProblem(search, 422, 'invalid_field').field).toBe('/offset');
  });
});

/** Synchronous work in a store call (SQLite's are synchronous): the timer cannot fire during it. */
function busyFor(ms: number) {
  return (store: RegistryStore): RegistryStore =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'findArtifacts' && prop !== 'findReadyArtifacts' && prop !== 'listArtifacts')
          return typeof value === 'function' ? value.bind(target) : value;
        return (...args: unknown[]) => {
          const until = Date.now() + ms;
          while (Date.now() < until) {
            /* hold the event loop */
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
}

describe('the deadline covers synchronous work', () => {
  it('answers 504 when search, export and the tool list finish their synchronous work past REQUEST_TIMEOUT_MS', async () => {
    t = await startTestApp({ env: { REQUEST_TIMEOUT_MS: '20' }, wrapRegistry: busyFor(60) });
    const h = await t.auth('u-admin');
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/agent/v1/agents/search', headers: h, payload: {} }),
      504,
      'request_timeout',
    );
    expectProblem(
      await t.app.inject({ method: 'GET', url: '/registry/v1/workspaces/ws-a/export', headers: h }),
      504,
      'request_timeout',
    );
    expectProblem(await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: h }), 504, 'request_timeout');
  });
});

describe('router rejections, parameters and paths', () => {
  it('refuses the user directory to an agent service account, over REST and GraphQL', async () => {
    t = await startTestApp();
    const key = { authorization: `Bearer ${TEST_API_KEY}` };
    expectProblem(await t.app.inject({ method: 'GET', url: '/registry/v1/users', headers: key }), 403, 'access_denied');
    const list = (await gql(t, '{ users(first: 5) { totalCount } }', key)).json();
    expect(list.errors[0].extensions.code).toBe('access_denied');
    const one = (await gql(t, '{ user(id: "u-admin") { id } }', key)).json();
    expect(one.errors[0].extensions.code).toBe('access_denied');
    const entity = (
      await gql(
        t,
        '{ _entities(representations: [{ __typename: "User", id: "u-admin" }]) { ... on User { id } } }',
        key,
      )
    ).json();
    expect(entity.errors[0].extensions.code).toBe('access_denied');
    // Edges to people show no one: the agent reads its workspace's artifacts, not the directory.
    const creator = (await gql(t, '{ agent(id: "ag-2") { id creator { id } } }', key)).json();
    expect(creator.data.agent).toEqual({ id: 'ag-2', creator: null });
    // A user still reads the directory.
    expect(
      (await t.app.inject({ method: 'GET', url: '/registry/v1/users', headers: await t.auth('u-viewer') })).statusCode,
    ).toBe(200);
  });

  it('counts the GraphQL fields of operations 3 and 6 against the same per-minute limit as REST', async () => {
    t = await startTestApp({ env: { RATE_LIMIT_PER_MIN: '3' } });
    const h = await t.auth('u-admin');
    expect((await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: h })).statusCode).toBe(200);
    const twice = (await gql(t, '{ a: tools(first: 1) { totalCount } b: tools(first: 1) { totalCount } }', h)).json();
    expect(twice.errors).toBeUndefined();
    const over = await gql(t, '{ tools(first: 1) { totalCount } }', h);
    expect(over.json().errors[0].extensions).toMatchObject({ code: 'rate_limited', http: { status: 429 } });
    expectProblem(await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: h }), 429, 'rate_limited');
    // Operation 3 has its own quota.
    expect(
      (await t.app.inject({ method: 'POST', url: '/mcp/v1/tools/aggregate', headers: h, payload: {} })).statusCode,
    ).toBe(200);
    expect((await gql(t, '{ toolAggregate(first: 1) { totalCount } }', h)).json().errors).toBeUndefined();
  });
});

describe('one invalid body answered with six times its size', () => {
  it('lists at most 100 invalid fields, and says "at least" (120,875 unknown keys answered 6 MB before)', async () => {
    t = await startTestApp();
    const now = Math.floor(Date.now() / 1000);
    const body: Record<string, unknown> = {
      start_time_unix_seconds: now - 86400,
      end_time_unix_seconds: now,
      request_type: 'scalar',
      queries: [{ name: 'q', measure: 'spans' }],
    };
    for (let i = 0; i < 5000; i++) body[`x${i}`] = 0;
    const res = await t.app.inject({
      method: 'POST',
      url: '/skill/v1/skills/sk-1/traces/stats/query',
      headers: await t.auth('u-admin'),
      payload: body,
    });
    const problem = expectProblem(res, 422, 'validation_failed');
    expect(problem.detail).toBe('at least 100 fields are invalid');
    const errors = (problem as { errors?: { field: string }[] }).errors ?? [];
    expect(errors).toHaveLength(100);
    expect(errors[0]?.field).toBe('/x0');
    expect(res.body.length).toBeLessThan(10_000);
    // Fewer than the cap: counted exactly.
    const two = await t.app.inject({
      method: 'POST',
      url: '/skill/v1/skills/sk-1/traces/stats/query',
      headers: await t.auth('u-admin'),
      payload: {
        ...body,
        ...Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`x${i}`, undefined])),
        y: 1,
        z: 2,
      },
    });
    expect(expectProblem(two, 422, 'validation_failed').detail).toBe('2 fields are invalid');
  });
});
