import { afterEach, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { expectProblem } from '../helpers/problem.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The real store, but one method answers only after `ms` (and notes whether it was cancelled). */
function slow(method: keyof RegistryStore, ms: number) {
  return (store: RegistryStore): RegistryStore =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== method || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await new Promise((r) => setTimeout(r, ms));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
}

describe('request deadline', () => {
  it('answers 504 request_timeout when the store is slower than REQUEST_TIMEOUT_MS', async () => {
    // The store answers only after 4 s: a 504 well before that can only be the deadline's (no
    // margin to lose on a busy machine, where the 100 ms deadline itself may be late).
    t = await startTestApp({ env: { REQUEST_TIMEOUT_MS: '100' }, wrapRegistry: slow('findReadyArtifacts', 4000) });
    const started = Date.now();
    const res = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await t.auth('u-admin') });
    expectProblem(res, 504, 'request_timeout');
    expect(Date.now() - started).toBeLessThan(3000);
    // The service keeps answering afterwards.
    const ok = await t.app.inject({
      method: 'GET',
      url: '/skill/v1/insights/schemas',
      headers: await t.auth('u-admin'),
    });
    expect(ok.statusCode).toBe(200);
  });
});

describe('metrics', () => {
  it('counts requests by route template and status in Prometheus format', async () => {
    t = await startTestApp();
    await t.app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=1', headers: await t.auth('u-admin') });
    await t.app.inject({ method: 'GET', url: '/mcp/v1/tools' });
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toContain('gateway_http_requests_total{method="GET",route="/mcp/v1/tools",status="200"} 1');
    expect(res.body).toContain('gateway_http_requests_total{method="GET",route="/mcp/v1/tools",status="401"} 1');
    expect(res.body).toMatch(
      /gateway_http_request_duration_seconds_bucket\{le="0\.5",method="GET",route="\/mcp\/v1\/tools",status="200"\} 1/,
    );
  });
});

describe('response cache', () => {
  it('reuses an answer for the same caller only until the data changes', async () => {
    t = await startTestApp();
    const admin = await t.auth('u-admin');
    const first = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: admin });
    const again = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: admin });
    expect(again.headers['x-cache']).toBe('hit');
    expect(again.body).toBe(first.body);
    const viewer = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await t.auth('u-viewer') });
    expect(viewer.headers['x-cache']).toBeUndefined();
    expect(viewer.json().page.total).toBeLessThan(first.json().page.total);

    const { parseBundle } = await import('../../src/bundle/parse.ts');
    const { smallBundle } = await import('../fixtures/small-bundle.ts');
    const bundle = smallBundle();
    const tool = bundle.artifacts.find((a) => a.id === 'tl-1') as Record<string, unknown>;
    tool.name = 'renamed_tool';
    await t.registry.importBundle(parseBundle(bundle));
    const after = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: admin });
    expect(after.headers['x-cache']).toBeUndefined();
    expect(after.json().items.map((i: { name: string }) => i.name)).toContain('renamed_tool');
  });
});

describe('response cache bounds', () => {
  // Room for one answer of a 3-tool page (about 3 KB here), not two.
  const start = async () => {
    t = await startTestApp({ env: { RESPONSE_CACHE_BYTES: '4000' } });
    return t;
  };

  it('keeps at most RESPONSE_CACHE_BYTES of bodies: a second answer evicts the least recently used', async () => {
    const c = await start();
    const admin = await c.auth('u-admin');
    const list = (url: string) => c.app.inject({ method: 'GET', url, headers: admin });
    const a = await list('/mcp/v1/tools?limit=3');
    expect(a.body.length).toBeGreaterThan(2000);
    expect((await list('/mcp/v1/tools?limit=3')).headers['x-cache']).toBe('hit');
    const b = await list('/mcp/v1/tools?limit=3&offset=1');
    expect(b.headers['x-cache']).toBeUndefined();
    expect((await list('/mcp/v1/tools?limit=3&offset=1')).headers['x-cache']).toBe('hit');
    const again = await list('/mcp/v1/tools?limit=3');
    expect(again.headers['x-cache']).toBeUndefined();
    expect(again.body).toBe(a.body);
  });

  it('never caches a body larger than the whole budget', async () => {
    const c = await start();
    const admin = await c.auth('u-admin');
    const big = () => c.app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=200', headers: admin });
    expect((await big()).body.length).toBeGreaterThan(4000);
    expect((await big()).headers['x-cache']).toBeUndefined();
  });
});

describe('rate limits (operations 3 and 6)', () => {
  it('allows N requests a minute per caller and route, then 429 rate_limited with Retry-After', async () => {
    t = await startTestApp({ env: { RATE_LIMIT_PER_MIN: '3' } });
    const admin = await t.auth('u-admin');
    for (let i = 0; i < 3; i++) {
      const ok = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: admin });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['ratelimit-policy']).toBe('"per-caller";q=3;w=60');
      expect(ok.headers.ratelimit).toMatch(new RegExp(`^"per-caller";r=${2 - i};t=\\d+$`));
    }
    const limited = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: admin });
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Another caller, another limited route, and unlimited routes are unaffected.
    expect(
      (await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await t.auth('u-viewer') })).statusCode,
    ).toBe(200);
    expect(
      (await t.app.inject({ method: 'POST', url: '/mcp/v1/tools/aggregate', headers: admin, payload: {} })).statusCode,
    ).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/registry/v1/users', headers: admin })).statusCode).toBe(200);
  });
});

describe('registry store down', () => {
  it('answers 503 service_unavailable (REST and GraphQL), /readyz not ready, /healthz up', async () => {
    t = await startTestApp();
    const headers = await t.auth('u-admin');
    await t.registry.close();
    const res = await t.app.inject({ method: 'GET', url: '/registry/v1/users', headers });
    expectProblem(res, 503, 'service_unavailable');
    expect(res.headers['retry-after']).toBe('5');
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const gql = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: { query: '{ tools(first: 1) { totalCount } }' },
    });
    expect(gql.json().errors[0].extensions).toMatchObject({ code: 'service_unavailable', http: { status: 503 } });
  });
});
