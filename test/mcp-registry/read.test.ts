/**
 * The reads of the MCP Registry API v0.1 as IDE clients make them: the `limit=1` probe and the
 * `versions/latest` lookup of a name with a slash, anonymous against a published workspace and with
 * a token, answered exactly; the list, a server's versions, one version; who sees what. Every answer
 * is checked against the schemas written from the specification (test/fixtures/mcp-registry).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerVersion } from '../../src/domain/types.ts';
import { expectServerList, expectServerResponse } from '../fixtures/mcp-registry/schemas.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { expectedResponse, expectedUsage, seedServers } from './fixture.ts';

let t: TestApp;
let stored: Map<string, McpServerVersion>;
let viewer: { authorization: string };
const v = (key: string) => stored.get(key) as McpServerVersion;
/** u-viewer reads ws-a-team and its sub-workspace. */
const VIEWER = ['ws-a-team', 'ws-a-sub'];

beforeAll(async () => {
  t = await startTestApp({ env: { MCP_REGISTRY_PUBLIC_WORKSPACES: 'ws-a-team' } });
  stored = await seedServers(t);
  viewer = await t.auth('u-viewer');
});
afterAll(async () => {
  await t.close();
});

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await t.app.inject({ method: 'GET', url, headers });
  return { res, body: res.json<Record<string, unknown>>() };
}

describe('the two requests of an IDE client', () => {
  it('probe GET /v0.1/servers?limit=1, anonymous: the first published server and a cursor', async () => {
    const { res, body } = await get('/v0.1/servers?limit=1');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expectServerList(body);
    expect(body).toEqual({
      servers: [expectedResponse(v('io.github.x/y@1.0.0'), expectedUsage('y', ['ws-a-team']))],
      metadata: { nextCursor: expect.any(String), count: 1 },
    });
  });

  it('lookup GET /v0.1/servers/io.github.x%2Fy/versions/latest, anonymous: the latest live version', async () => {
    const { res, body } = await get('/v0.1/servers/io.github.x%2Fy/versions/latest');
    expect(res.statusCode).toBe(200);
    expectServerResponse(body);
    expect(v('io.github.x/y@1.2.0').is_latest).toBe(true);
    expect(body).toEqual(expectedResponse(v('io.github.x/y@1.2.0'), expectedUsage('y', ['ws-a-team'])));
  });

  it('probe with a token: what the caller reads, its usage counting its own workspaces', async () => {
    const { res, body } = await get('/v0.1/servers?limit=1', viewer);
    expect(res.statusCode).toBe(200);
    expectServerList(body);
    expect(body).toEqual({
      servers: [expectedResponse(v('io.github.acme/weather@0.1.0'), expectedUsage('weather', VIEWER))],
      metadata: { nextCursor: expect.any(String), count: 1 },
    });
  });

  it('lookup with a token: the same version, usage over the ws-a-team subtree', async () => {
    const { res, body } = await get('/v0.1/servers/io.github.x%2Fy/versions/latest', viewer);
    expect(res.statusCode).toBe(200);
    expectServerResponse(body);
    const usage = expectedUsage('y', VIEWER);
    expect(usage.calls).toBe(15);
    expect(body).toEqual(expectedResponse(v('io.github.x/y@1.2.0'), usage));
  });
});

describe('lists', () => {
  it('pages every readable live version by name and version, nextCursor absent at the end', async () => {
    const seen: unknown[] = [];
    let url = '/v0.1/servers?limit=2';
    for (;;) {
      const { res, body } = await get(url, viewer);
      expect(res.statusCode).toBe(200);
      expectServerList(body);
      const page = body as { servers: unknown[]; metadata: { nextCursor?: string; count: number } };
      expect(page.metadata.count).toBe(page.servers.length);
      seen.push(...page.servers);
      if (page.metadata.nextCursor === undefined) break;
      url = `/v0.1/servers?limit=2&cursor=${encodeURIComponent(page.metadata.nextCursor)}`;
    }
    expect(seen).toEqual([
      expectedResponse(v('io.github.acme/weather@0.1.0'), expectedUsage('weather', VIEWER)),
      expectedResponse(v('io.github.x/y@1.0.0'), expectedUsage('y', VIEWER)),
      expectedResponse(v('io.github.x/y@1.2.0'), expectedUsage('y', VIEWER)),
    ]);
  });

  it('the last page has no nextCursor member at all', async () => {
    const { body } = await get('/v0.1/servers', viewer);
    expect(body.metadata).toEqual({ count: 3 });
  });

  it('search, version=latest, an exact version, include_deleted and updated_since filter', async () => {
    const names = async (query: string) => {
      const { res, body } = await get(`/v0.1/servers?${query}`, viewer);
      expect(res.statusCode).toBe(200);
      expectServerList(body);
      return (body.servers as { server: { name: string; version: string } }[]).map(
        (s) => `${s.server.name}@${s.server.version}`,
      );
    };
    expect(await names('search=WEATH')).toEqual(['io.github.acme/weather@0.1.0']);
    expect(await names('search=%25')).toEqual([]);
    expect(await names('version=latest')).toEqual(['io.github.acme/weather@0.1.0', 'io.github.x/y@1.2.0']);
    expect(await names('version=1.0.0')).toEqual(['io.github.x/y@1.0.0']);
    expect(await names('include_deleted=true&search=x/y')).toEqual([
      'io.github.x/y@1.0.0',
      'io.github.x/y@1.2.0',
      'io.github.x/y@2.0.0',
    ]);
    // updated_since brings deleted versions along, unless told otherwise.
    const since = v('io.github.x/y@2.0.0').updated_at;
    expect(await names(`updated_since=${encodeURIComponent(since)}`)).toEqual(
      [...stored.values()]
        .filter((s) => VIEWER.includes(s.workspace_id) && s.updated_at >= since)
        .map((s) => `${s.name}@${s.version}`)
        .sort(),
    );
    expect(await names(`updated_since=${encodeURIComponent(since)}&include_deleted=false`)).not.toContain(
      'io.github.x/y@2.0.0',
    );
  });

  it("a server's versions: the latest published first, deleted ones on request", async () => {
    const { res, body } = await get('/v0.1/servers/io.github.x%2Fy/versions');
    expect(res.statusCode).toBe(200);
    expectServerList(body);
    const usage = expectedUsage('y', ['ws-a-team']);
    expect(body).toEqual({
      servers: [expectedResponse(v('io.github.x/y@1.2.0'), usage), expectedResponse(v('io.github.x/y@1.0.0'), usage)],
      metadata: { count: 2 },
    });
    const all = await get('/v0.1/servers/io.github.x%2Fy/versions?include_deleted=true');
    expectServerList(all.body);
    expect((all.body.metadata as { count: number }).count).toBe(3);
  });

  it('one exact version, a version with build metadata URL-encoded, and a deleted one', async () => {
    const { res, body } = await get('/v0.1/servers/io.github.x%2Fy/versions/1.0.0');
    expect(res.statusCode).toBe(200);
    expect(body).toEqual(expectedResponse(v('io.github.x/y@1.0.0'), expectedUsage('y', ['ws-a-team'])));
    expectProblem((await get('/v0.1/servers/io.github.x%2Fy/versions/2.0.0')).res, 404, 'not_found');
    const deleted = await get('/v0.1/servers/io.github.x%2Fy/versions/2.0.0?include_deleted=true');
    expect(deleted.res.statusCode).toBe(200);
    expectServerResponse(deleted.body);
    expectProblem((await get('/v0.1/servers/io.github.x%2Fy/versions/1.0.0%2Bbuild.5')).res, 404, 'not_found');
  });
});

describe('who reads what', () => {
  it('anonymous readers see the published workspace only, not its sub-workspace', async () => {
    const { body } = await get('/v0.1/servers');
    expect((body.servers as { server: { name: string } }[]).map((s) => s.server.name)).toEqual([
      'io.github.x/y',
      'io.github.x/y',
    ]);
    for (const name of ['io.github.acme%2Fweather', 'io.github.acme%2Fjira', 'com.example%2Fbee']) {
      const problem = expectProblem((await get(`/v0.1/servers/${name}/versions/latest`)).res, 404, 'not_found');
      expect(problem.error).toBe(problem.detail);
      expectProblem((await get(`/v0.1/servers/${name}/versions`)).res, 404, 'not_found');
    }
  });

  it('a caller: 403 for a server of its organization it cannot read, 404 for another organization', async () => {
    expectProblem((await get('/v0.1/servers/io.github.acme%2Fjira/versions/latest', viewer)).res, 403, 'access_denied');
    expectProblem((await get('/v0.1/servers/io.github.acme%2Fjira/versions', viewer)).res, 403, 'access_denied');
    expectProblem((await get('/v0.1/servers/com.example%2Fbee/versions/latest', viewer)).res, 404, 'not_found');
    expectProblem((await get('/v0.1/servers/io.github.x%2Fnone/versions/latest', viewer)).res, 404, 'not_found');
  });

  it('credentials that fail are refused even where anonymous reading is allowed', async () => {
    const res = (await get('/v0.1/servers?limit=1', { authorization: 'Bearer not-a-token' })).res;
    const problem = expectProblem(res, 401, 'token_malformed');
    expect(problem.error).toBe(problem.detail);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});
