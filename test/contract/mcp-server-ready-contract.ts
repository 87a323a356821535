/**
 * The MCP server store contract, ready part: the ready list (`listReadyMcpServerVersions`) answers
 * the versions of the list, in its order, each with its server.json as the stored text, and the
 * answer the API splices from it (mcp-servers/present.ts `serverResponseJson`) is byte for byte
 * what the response schema's serializer makes of the object path (`toServerResponse`): for
 * documents published and imported, with text escapes, numbers and member names of every awkward
 * kind, latest or not, deleted, with usage, without calls and without usage. Every registry engine
 * runs it unchanged; `open` returns a fresh, empty store each call.
 */
import fastJson from 'fast-json-stringify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { McpServerEntry, McpServerVersion } from '../../src/domain/types.ts';
import { readyVersion, serverResponseJson, toServerResponse } from '../../src/mcp-servers/present.ts';
import { usageJson, type McpServerUsage } from '../../src/mcp-servers/usage.ts';
import { serverResponseSchema } from '../../src/rest/schemas/mcp-registry.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { mcpQuery } from './mcp-server-contract.ts';

const serialize = fastJson(serverResponseSchema as unknown as Parameters<typeof fastJson>[0]);

/**
 * A server.json with what a serializer may write differently: escapes of every kind (lone
 * surrogates, controls, quotes), an own `__proto__` member as JSON.parse makes it, integer-like
 * member names (which objects order first), numbers JSON writes in exponent form, deep nesting.
 */
function awkward(name: string, version: string): Record<string, unknown> {
  const text = String.raw`{"name":"NAME","version":"VERSION","description":"quote \" backslash \\ slash / nl \n tab \t nul \u0000 bell \u0007 del \u007f e\u0301 \u00e9 \ud834\udd1e lone \ud800 and \udc00 line sep \u2028",
    "__proto__":{"polluted":true},"10":"ten","2":"two","a \"quoted\" \\ name":1,"ctl\u0001name":2,"\udbff":"lone name","":"empty name",
    "numbers":[0,-0,1e21,1e-7,123.456,-5,9007199254740993,1.7976931348623157e308,5e-324,0.1,100,1E2],
    "nested":{"empty":{},"list":[],"deep":[[[{"a":null,"b":true,"c":false}]]]},
    "_meta":{"io.modelcontextprotocol.registry/publisher-provided":{"tool":"x","n":1.5}}}`;
  return JSON.parse(text.replace('NAME', name).replace('VERSION', version)) as Record<string, unknown>;
}

const USAGES: (McpServerUsage | undefined)[] = [
  undefined,
  { window_days: 30, calls: 0, error_rate: null, p95_latency_ms: null },
  { window_days: 30, calls: 7, error_rate: 2 / 7, p95_latency_ms: 123.5 },
  { window_days: 30, calls: 1e6, error_rate: 0, p95_latency_ms: 1e-7 },
];

export function mcpServerReadyContract(engine: string, open: () => Promise<RegistryStore>): void {
  describe(`MCP server store contract, ready versions: ${engine}`, () => {
    let store: RegistryStore;
    beforeAll(async () => {
      store = await open();
      await store.importBundle(parseBundle(smallBundle()));
    });
    afterAll(async () => {
      await store.close();
    });

    /** The ready list equals the object list, and each spliced answer the serialized object's. */
    async function expectSameAnswers(search: string, includeDeleted = false): Promise<McpServerVersion[]> {
      const query = mcpQuery({ search, includeDeleted });
      const objects = await store.listMcpServerVersions(query);
      const ready = await store.listReadyMcpServerVersions(query);
      expect(objects.length).toBeGreaterThan(0);
      expect(ready).toEqual(objects.map(readyVersion));
      for (const [i, v] of objects.entries()) {
        const r = ready[i];
        if (r === undefined) throw new Error(`no ready version for ${v.name}@${v.version}`);
        expect(r.server_json, 'the stored text is what JSON.stringify writes').toBe(JSON.stringify(v.server));
        for (const usage of USAGES)
          expect(serverResponseJson(r, usage === undefined ? undefined : usageJson(usage))).toBe(
            serialize(toServerResponse(v, usage)),
          );
        // Registry fields no writer stores, escaped as the serializer escapes them.
        const odd = { workspace_id: 'ws "a" \\ \u0001 \ud800', status_changed_at: 'é\u2028\n', updated_at: '' };
        expect(serverResponseJson({ ...r, ...odd }, undefined)).toBe(
          serialize(toServerResponse({ ...v, ...odd }, undefined)),
        );
      }
      return objects;
    }

    it('published versions: the spliced answer is the serialized one, byte for byte', async () => {
      const at = (d: number) => `2026-04-0${d}T00:00:00.000Z`;
      for (const [version, d, status] of [
        ['1.0.0', 1, 'active'],
        ['2.0.0', 2, 'deprecated'],
        ['3.0.0', 3, 'deleted'],
      ] as const)
        await store.publishMcpServer({
          id: 'srv-ready',
          org_id: 'org-a',
          workspace_id: 'ws-a-team',
          server: awkward('io.ready/awkward', version),
          status,
          published_at: at(d),
          created_by: 'u-admin',
        });
      await store.publishMcpServer({
        id: 'srv "ready" \\ é \u2028',
        org_id: 'org-a',
        workspace_id: 'ws-a-team',
        server: awkward('io.ready/odd-id', '1.0.0'),
        status: 'active',
        published_at: at(4),
        created_by: 'u-admin',
      });
      const versions = (await expectSameAnswers('io.ready/', true)).filter((v) => v.name === 'io.ready/awkward');
      expect(versions.map((v) => `${v.version} ${v.status}${v.is_latest ? ' latest' : ''}`)).toEqual([
        '1.0.0 active',
        '2.0.0 deprecated latest',
        '3.0.0 deleted',
      ]);
      // An own member, never a prototype: it is sent as a member of the document.
      expect(Object.hasOwn(versions[0]?.server ?? {}, '__proto__')).toBe(true);
      expect(JSON.stringify(versions[0]?.server)).toContain('"__proto__":{"polluted":true}');
      expect(await store.listReadyMcpServerVersions(mcpQuery({ search: 'io.ready/' }))).toHaveLength(3);
      expect(await store.listReadyMcpServerVersions(mcpQuery({ search: 'io.ready/', workspaceIds: [] }))).toEqual([]);
    });

    it('imported versions, and a version a re-import changed in place: the same', async () => {
      const entry = (server: Record<string, unknown>): McpServerEntry => ({
        id: 'srv-ready-import',
        org_id: 'org-a',
        workspace_id: 'ws-a-team',
        server,
        status: 'active',
        published_at: '2026-04-05T00:00:00.000Z',
        created_by: 'u-admin',
      });
      const only = (mcp_servers: McpServerEntry[]) => ({ ...parseBundle({}), mcp_servers });
      await store.importBundle(only([entry(awkward('io.ready-import/x', '1.0.0'))]));
      await expectSameAnswers('io.ready-import/');
      const changed = { ...awkward('io.ready-import/x', '1.0.0'), title: 'Changed \u2029 in place' };
      await store.importBundle(only([entry(changed)]));
      const [v] = await expectSameAnswers('io.ready-import/');
      expect(v?.server.title).toBe('Changed \u2029 in place');
    });
  });
}
