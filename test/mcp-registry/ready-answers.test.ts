/**
 * The reads of the MCP Registry API answer JSON text spliced from the stored server.json text
 * (mcp-servers/present.ts). Each answer must be byte for byte what the response schema's serializer
 * makes of the object path (the stored versions, `toServerResponse`, the usage counted over the
 * reader's workspaces), for every reader: anonymous, a viewer, an admin, another organization's
 * admin; with usage, without calls, and without usage while the trace store is down. The publish
 * answer, which Fastify serializes from the object, equals the read of the same version.
 */
import fastJson from 'fast-json-stringify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAccess } from '../../src/auth/access.ts';
import type { McpServerVersion } from '../../src/domain/types.ts';
import { toServerResponse } from '../../src/mcp-servers/present.ts';
import { usageInScope, type McpServerUsage } from '../../src/mcp-servers/usage.ts';
import { serverListSchema, serverResponseSchema } from '../../src/rest/schemas/mcp-registry.ts';
import type { McpServerQuery } from '../../src/store/mcp-server-port.ts';
import { TraceStoreUnavailableError } from '../../src/store/trace-port.ts';
import { publishVersions, serverJson } from '../fixtures/mcp-registry/servers.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedServers } from './fixture.ts';

type Schema = Parameters<typeof fastJson>[0];
const serializeList = fastJson(serverListSchema as unknown as Schema);
const serializeOne = fastJson(serverResponseSchema as unknown as Schema);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { MCP_REGISTRY_PUBLIC_WORKSPACES: 'ws-a-team', RESPONSE_CACHE_ENTRIES: '0' } });
  await seedServers(t);
  // Text escapes and member names a serializer may write differently, through the store.
  await publishVersions(t.registry, [
    {
      id: 'awkward',
      workspaceId: 'ws-a-team',
      name: 'io.github.x/awkward',
      version: '1.0.0',
      server: {
        ...serverJson('io.github.x/awkward', '1.0.0'),
        ...(JSON.parse(String.raw`{"title":"q \" b \\ nl \n nul \u0000 lone \ud800 pair \ud834\udd1e ls \u2028",
          "__proto__":{"own":true},"10":"ten","_meta":{"io.modelcontextprotocol.registry/publisher-provided":
          {"n":[1e21,-0,5e-324],"\udbff":"lone name"}}}`) as Record<string, unknown>),
      },
    },
  ]);
});
afterAll(async () => {
  await t.close();
});

const READERS = ['anonymous', 'u-viewer', 'u-admin', 'u-b'] as const;
type Reader = (typeof READERS)[number];
const headersOf = async (reader: Reader): Promise<Record<string, string>> =>
  reader === 'anonymous' ? {} : t.auth(reader, reader === 'u-b' ? 'org-b' : 'org-a');

/** The workspaces a reader reads (and whose spans its usage counts). */
async function readableOf(reader: Reader): Promise<readonly string[]> {
  if (reader === 'anonymous') return ['ws-a-team'];
  const caller = await t.authenticator.authenticate((await headersOf(reader)).authorization);
  return (await loadAccess(t.registry, caller)).readableWorkspaceIds;
}

/** Usage by organization and id, as the reader's answers count it; null: the trace store is down. */
async function usageOf(reader: Reader, versions: readonly McpServerVersion[], down = false) {
  if (down) return null;
  const workspaceIds = await readableOf(reader);
  const usage = new Map<string, McpServerUsage>();
  for (const orgId of new Set(versions.map((v) => v.org_id))) {
    const ids = versions.filter((v) => v.org_id === orgId).map((v) => v.id);
    const scope = { orgId, workspaceIds };
    for (const [id, u] of await usageInScope({ traces: t.traces, signal: new AbortController().signal }, scope, ids))
      usage.set(`${orgId}\n${id}`, u);
  }
  return usage;
}

const present = (versions: readonly McpServerVersion[], usage: Map<string, McpServerUsage> | null) =>
  versions.map((v) => toServerResponse(v, usage?.get(`${v.org_id}\n${v.id}`)));

async function get(reader: Reader, url: string): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url, headers: await headersOf(reader) });
  expect(res.statusCode, url).toBe(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  return res.body;
}

/** The list answer of the object path for `query` (a page of `limit`), the cursor taken from `body`. */
async function objectList(reader: Reader, query: Partial<McpServerQuery>, limit: number, body: string, down = false) {
  const rows = await t.registry.listMcpServerVersions({
    workspaceIds: await readableOf(reader),
    latestOnly: false,
    includeDeleted: false,
    ...query,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const { nextCursor } = (JSON.parse(body) as { metadata: { nextCursor?: string } }).metadata;
  expect(nextCursor !== undefined).toBe(rows.length > limit);
  return serializeList({
    servers: present(page, await usageOf(reader, page, down)),
    metadata: { ...(nextCursor !== undefined ? { nextCursor } : {}), count: page.length },
  });
}

describe('the spliced answers are the serialized ones, byte for byte', () => {
  for (const reader of READERS)
    it(`lists, a server's versions and one version, for ${reader}`, async () => {
      const all = await get(reader, '/v0.1/servers?limit=100&include_deleted=true');
      expect(all).toBe(await objectList(reader, { includeDeleted: true }, 100, all));
      const first = await get(reader, '/v0.1/servers?limit=2');
      expect(first).toBe(await objectList(reader, {}, 2, first));
      const latest = await get(reader, '/v0.1/servers?version=latest&search=X%2F');
      expect(latest).toBe(await objectList(reader, { latestOnly: true, search: 'x/' }, 30, latest));
      if (reader === 'u-b') return;
      const versions = (await t.registry.getMcpServerVersionsByName(await readableOf(reader), 'io.github.x/y'))
        .filter((v) => v.status !== 'deleted')
        .sort((a, b) => (a.published_at < b.published_at ? 1 : -1));
      const usage = await usageOf(reader, versions);
      expect(await get(reader, '/v0.1/servers/io.github.x%2Fy/versions')).toBe(
        serializeList({ servers: present(versions, usage), metadata: { count: versions.length } }),
      );
      const one = versions.find((v) => v.is_latest) as McpServerVersion;
      expect(await get(reader, '/v0.1/servers/io.github.x%2Fy/versions/latest')).toBe(
        serializeOne(toServerResponse(one, usage?.get(`${one.org_id}\n${one.id}`))),
      );
    });

  it('the answers carry usage with calls: the comparison is not of empty usage alone', async () => {
    const body = await get('u-viewer', '/v0.1/servers?limit=100');
    expect(body).toMatch(/"usage":\{"window_days":30,"calls":15,"error_rate":0\.\d+,"p95_latency_ms":\d+\}/);
    expect(body).toContain('"__proto__":{"own":true}');
    // A lone surrogate escaped (JSON.stringify's well-formed output), a pair sent as its character.
    expect(body).toContain(`${String.raw`lone \ud800 pair `}\ud834\udd1e`);
  });

  it('while the trace store is down: usage left out, the rest the same', async () => {
    const original = t.traces.serverUsage.bind(t.traces);
    t.traces.serverUsage = () => Promise.reject(new TraceStoreUnavailableError());
    try {
      for (const reader of ['anonymous', 'u-viewer'] as const) {
        const body = await get(reader, '/v0.1/servers?limit=100');
        expect(body).not.toContain('"usage"');
        expect(body).toBe(await objectList(reader, {}, 100, body, true));
      }
    } finally {
      t.traces.serverUsage = original;
    }
  });

  it('the publish answer (serialized by Fastify from the object) equals the read of that version', async () => {
    const server = {
      ...serverJson('io.github.x/published', '1.0.0'),
      description: 'quotes " and \\ and \u2028 and \u00e9 and \ud834\udd1e',
    };
    const headers = await t.auth('u-admin');
    const published = await t.app.inject({
      method: 'POST',
      url: '/v0.1/publish?workspace_id=ws-a-team',
      headers,
      payload: server,
    });
    expect(published.statusCode).toBe(200);
    expect(await get('u-admin', '/v0.1/servers/io.github.x%2Fpublished/versions/1.0.0')).toBe(published.body);
  });
});
