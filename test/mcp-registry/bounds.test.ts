/**
 * The MCP Registry API's bounds and edges: every parameter checked (400 with the error shape), the
 * CORS answers a browser-based reader needs, anonymous reads rate limited per client address and
 * refused when nothing is published, and usage left out (not an error) when the trace store is down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceStoreUnavailableError } from '../../src/store/trace-port.ts';
import { expectServerList, expectServerResponse } from '../fixtures/mcp-registry/schemas.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { expectedResponse, seedServers } from './fixture.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { MCP_REGISTRY_PUBLIC_WORKSPACES: 'ws-a-team,ws-none', RATE_LIMIT_PER_MIN: '1000' } });
  await seedServers(t);
});
afterAll(async () => {
  await t.close();
});

const get = (url: string, headers: Record<string, string> = {}, remoteAddress = '10.0.0.1') =>
  t.app.inject({ method: 'GET', url, headers, remoteAddress });

describe('parameters', () => {
  const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  it.each([
    ['limit 0', 'limit=0'],
    ['limit 101', 'limit=101'],
    ['limit not a number', 'limit=ten'],
    ['search over 200 characters', `search=${'a'.repeat(201)}`],
    ['a cursor that is not base64 JSON', 'cursor=%21%21%21'],
    ['a cursor of another shape', `cursor=${cursor({ name: 'io.github.x/y' })}`],
    ['a cursor of empty parts', `cursor=${cursor(['', ''])}`],
    ['a cursor over 1000 characters', `cursor=${'a'.repeat(1001)}`],
    ['updated_since not RFC 3339', 'updated_since=yesterday'],
    ['updated_since out of range', 'updated_since=2026-13-45T00:00:00Z'],
    ['updated_since on a day the month has not', 'updated_since=2026-02-30T00:00:00Z'],
    ['an empty version', 'version='],
    ['include_deleted not a boolean', 'include_deleted=maybe'],
    ['an unknown parameter', 'offset=3'],
  ])('%s: 400 invalid_query', async (_name, query) => {
    const res = await get(`/v0.1/servers?${query}`);
    const body = expectProblem(res, 400, 'invalid_query');
    expect(body.error).toBe(body.detail);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('the largest accepted values answer 200', async () => {
    for (const query of [
      'limit=1',
      'limit=100',
      `search=${'a'.repeat(200)}`,
      'updated_since=2026-01-01T00:00:00.5%2B02:00',
    ]) {
      const res = await get(`/v0.1/servers?${query}`);
      expect(res.statusCode, query).toBe(200);
      expectServerList(res.json());
    }
  });

  it('names and versions: encoded slashes and plus signs are decoded, bad encodings refused', async () => {
    expect((await get('/v0.1/servers/io.github.x%2Fy/versions/1.2.0')).statusCode).toBe(200);
    expect((await get('/v0.1/servers/io%2Egithub%2Ex%2Fy/versions/1%2E2%2E0')).statusCode).toBe(200);
    // An unencoded slash is another path.
    expectProblem(await get('/v0.1/servers/io.github.x/y/versions/latest'), 404, 'not_found');
    expectProblem(await get('/v0.1/servers/io.github.x%2Fy%E0%A4%A/versions'), 400, 'invalid_request');
    expectProblem(await get(`/v0.1/servers/${'n'.repeat(600)}/versions`), 400, 'invalid_request');
  });
});

describe('CORS', () => {
  it.each(['/v0.1/servers', '/v0.1/servers/io.github.x%2Fy/versions', '/v0.1/servers/io.github.x%2Fy/versions/latest'])(
    'preflight of %s allows any origin and the Authorization header',
    async (url) => {
      const res = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: 'https://ide.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(String(res.headers['access-control-allow-methods'])).toMatch(/\bGET\b/);
      expect(String(res.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toContain(
        'authorization',
      );
      const read = await get(url, { origin: 'https://ide.example' });
      expect(read.statusCode).toBe(200);
      expect(read.headers['access-control-allow-origin']).toBe('*');
    },
  );

  it('publish is not offered to browsers of other origins', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v0.1/publish',
      headers: { ...(await t.auth('u-admin')), origin: 'https://ide.example', 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(422);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await t.app.inject({ method: 'OPTIONS', url: '/v0.1/publish' });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('anonymous reads', () => {
  it('are rate limited per client address, apart from callers', async () => {
    const own = await startTestApp({ env: { MCP_REGISTRY_PUBLIC_WORKSPACES: 'ws-a-team', RATE_LIMIT_PER_MIN: '2' } });
    try {
      const at = (address: string, headers: Record<string, string> = {}) =>
        own.app.inject({ method: 'GET', url: '/v0.1/servers?limit=1', headers, remoteAddress: address });
      expect((await at('10.9.0.1')).statusCode).toBe(200);
      const second = await at('10.9.0.1');
      expect(second.statusCode).toBe(200);
      expect(second.headers.ratelimit).toBe(`"per-address";r=0;t=${String(second.headers.ratelimit).split('t=')[1]}`);
      const third = await at('10.9.0.1');
      expectProblem(third, 429, 'rate_limited');
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      expect(third.headers['access-control-allow-origin']).toBe('*');
      expect((await at('10.9.0.2')).statusCode).toBe(200);
      expect((await at('10.9.0.1', await own.auth('u-viewer'))).statusCode).toBe(200);
    } finally {
      await own.close();
    }
  });

  it('need credentials when no workspace is published (the default)', async () => {
    const own = await startTestApp();
    try {
      for (const url of [
        '/v0.1/servers?limit=1',
        '/v0.1/servers/io.github.x%2Fy/versions',
        '/v0.1/servers/io.github.x%2Fy/versions/latest',
      ])
        expectProblem(await own.app.inject({ method: 'GET', url }), 401, 'token_missing');
    } finally {
      await own.close();
    }
  });
});

describe('usage and the trace store', () => {
  it('usage is left out while the trace store is down; the registry still answers', async () => {
    const original = t.traces.serverUsage.bind(t.traces);
    t.traces.serverUsage = () => Promise.reject(new TraceStoreUnavailableError());
    try {
      const res = await get('/v0.1/servers/io.github.x%2Fy/versions/latest');
      expect(res.statusCode).toBe(200);
      const body = res.json<Record<string, unknown>>();
      expectServerResponse(body);
      const [latest] = (await t.registry.getMcpServers('org-a', ['y'])) as [Parameters<typeof expectedResponse>[0]];
      expect(body).toEqual(expectedResponse(latest));
      const list = await get('/v0.1/servers');
      expect(list.statusCode).toBe(200);
      expectServerList(list.json());
    } finally {
      t.traces.serverUsage = original;
    }
  });
});
