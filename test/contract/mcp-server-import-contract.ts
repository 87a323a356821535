/**
 * The MCP server store contract, bundle part: what an import of `mcp_servers` stores, how a
 * re-import updates in place, and keyset paging over 10,000 servers. Every registry engine runs
 * it unchanged; `open` returns a fresh, empty store each call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { Bundle, McpServerEntry, McpServerVersion } from '../../src/domain/types.ts';
import { McpServerConflictError, type McpServerQuery } from '../../src/store/mcp-server-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { labels, mcpQuery } from './mcp-server-contract.ts';

const day = (d: number) => `2026-03-${String(d).padStart(2, '0')}T00:00:00.000Z`;

function entry(id: string, name: string, version: string, extra: Partial<McpServerEntry> = {}): McpServerEntry {
  return {
    id,
    org_id: 'org-a',
    workspace_id: 'ws-a-team',
    server: { name, description: `The ${name} server`, version },
    status: 'active',
    created_by: 'u-admin',
    ...extra,
  };
}

/** A bundle of these MCP server versions only. */
const serversOnly = (mcp_servers: McpServerEntry[]): Bundle => ({ ...parseBundle({}), mcp_servers });

/** `name@version` labels in list order: by name, then version, in byte order. */
const listOrder = (pairs: [string, string][]) =>
  pairs.sort(([n1, v1], [n2, v2]) => bytes(n1, n2) || bytes(v1, v2)).map(([n, v]) => `${n}@${v}`);
const bytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Every page of a keyset walk, `limit` versions at a time. */
async function walk(store: RegistryStore, query: McpServerQuery): Promise<McpServerVersion[][]> {
  const pages: McpServerVersion[][] = [];
  let after: McpServerQuery['after'];
  for (;;) {
    const page = await store.listMcpServerVersions({ ...query, ...(after && { after }) });
    if (page.length === 0) return pages;
    // A keyset that does not move on would walk forever.
    if (pages.length > 1000) throw new Error('the keyset walk does not end');
    pages.push(page);
    const last = page[page.length - 1] as McpServerVersion;
    after = { name: last.name, version: last.version };
  }
}

export function mcpServerImportContract(engine: string, open: () => Promise<RegistryStore>): void {
  describe(`MCP server store contract, bundles: ${engine}`, () => {
    let store: RegistryStore;
    beforeAll(async () => {
      store = await open();
      await store.importBundle(parseBundle(smallBundle()));
    });
    afterAll(async () => {
      await store.close();
    });

    it('imports versions as given, and a re-import that changes nothing moves no time', async () => {
      const entries = [
        entry('srv-imp', 'io.imp/a', '1.0.0', { published_at: '2026-03-01T02:00:00+02:00' }),
        entry('srv-imp', 'io.imp/a', '1.1.0'),
      ];
      const before = new Date().toISOString();
      const generation = await store.generation();
      expect((await store.importBundle(serversOnly(entries))).mcp_servers).toBe(2);
      expect(await store.generation()).not.toBe(generation);
      const first = await store.getMcpServerHistory('org-a', ['srv-imp']);
      expect(labels(first)).toEqual(['io.imp/a@1.0.0', 'io.imp/a@1.1.0*']);
      const [v1, v2] = first as [McpServerVersion, McpServerVersion];
      expect(v1).toMatchObject({ published_at: day(1), updated_at: day(1), status_changed_at: day(1) });
      expect(v1.server).toEqual(entries[0]?.server);
      // Without published_at, the import's instant, for all three times.
      expect(v2.published_at >= before && v2.published_at <= new Date().toISOString()).toBe(true);
      expect([v2.updated_at, v2.status_changed_at]).toEqual([v2.published_at, v2.published_at]);
      await store.importBundle(serversOnly(entries));
      expect(await store.getMcpServerHistory('org-a', ['srv-imp'])).toEqual(first);
    });

    it('updates a re-imported version in place: its status, its document, its workspace', async () => {
      await store.importBundle(
        serversOnly([
          entry('srv-upd', 'io.upd/a', '1.0.0', { published_at: day(1) }),
          entry('srv-upd', 'io.upd/a', '2.0.0', { published_at: day(2) }),
        ]),
      );
      const before = new Date().toISOString();
      const changed = entry('srv-upd', 'io.upd/a', '2.0.0', { status: 'deleted', created_by: 'u-susp' });
      await store.importBundle(serversOnly([changed]));
      const [v1, v2] = (await store.getMcpServerHistory('org-a', ['srv-upd'])) as [McpServerVersion, McpServerVersion];
      expect(labels([v1, v2])).toEqual(['io.upd/a@1.0.0*', 'io.upd/a@2.0.0']);
      expect(v2).toMatchObject({ status: 'deleted', published_at: day(2), updated_by: 'u-susp', created_by: 'u-susp' });
      expect(v2.status_changed_at >= before && v2.updated_at === v2.status_changed_at).toBe(true);
      // 1.0.0 became latest: updated by this import; its status did not change.
      expect(v1.updated_at >= before && v1.status_changed_at === day(1)).toBe(true);

      const server = { ...changed.server, title: 'Renamed title' };
      await store.importBundle(serversOnly([{ ...changed, server, workspace_id: 'ws-a-sub' }]));
      const moved = await store.getMcpServerHistory('org-a', ['srv-upd']);
      expect(moved.map((v) => v.workspace_id)).toEqual(['ws-a-sub', 'ws-a-sub']);
      expect(moved[1]?.server).toEqual(server);
      expect(
        labels(await store.listMcpServerVersions(mcpQuery({ workspaceIds: ['ws-a-team'], search: 'io.upd/' }))),
      ).toEqual([]);
    });

    it('refuses, whole, an entry whose id has another name or whose name is another id', async () => {
      await store.importBundle(serversOnly([entry('srv-own', 'io.own/a', '1.0.0')]));
      const withOrg = (e: McpServerEntry): Bundle => ({
        ...serversOnly([entry('srv-fine', 'io.own/fine', '1.0.0'), e]),
        organizations: [{ id: 'org-new', name: 'New', status: 'active' }],
      });
      for (const e of [entry('srv-own', 'io.own/b', '1.0.0'), entry('srv-thief', 'io.own/a', '2.0.0')]) {
        const refused = await store.importBundle(withOrg(e)).then(
          () => null,
          (err: unknown) => err,
        );
        expect(refused).toBeInstanceOf(McpServerConflictError);
        expect(refused).toMatchObject({ reason: 'name_taken', message: expect.stringContaining(e.id) as unknown });
      }
      expect(await store.getOrganizations(['org-new'])).toEqual([]);
      expect(labels(await store.listMcpServerVersions(mcpQuery({ search: 'io.own/' })))).toEqual(['io.own/a@1.0.0*']);
    });
  });

  describe(`MCP server store contract, 10,000 servers: ${engine}`, () => {
    let store: RegistryStore;
    const SERVERS = 10_000;
    /** Server i: a scrambled name; every 20th has a second version; every 50th a deleted third. */
    const name = (i: number) => `io.page/${i % 3 === 0 ? 'S' : 's'}-${String((i * 7919) % SERVERS)}`;
    beforeAll(async () => {
      store = await open();
      const entries: McpServerEntry[] = [];
      for (let i = 0; i < SERVERS; i++) {
        const workspace_id = i % 2 === 0 ? 'ws-a-team' : 'ws-a-sub';
        entries.push(entry(`srv-page-${String(i)}`, name(i), '1.0.0', { workspace_id }));
        if (i % 20 === 0) entries.push(entry(`srv-page-${String(i)}`, name(i), '1.1.0', { workspace_id }));
        if (i % 50 === 0)
          entries.push(entry(`srv-page-${String(i)}`, name(i), '2.0.0', { workspace_id, status: 'deleted' }));
      }
      // Out of the scope below: another workspace of the organization.
      for (let i = 0; i < 300; i++)
        entries.push(
          entry(`srv-out-${String(i)}`, `io.page/out-${String(i)}`, '1.0.0', { workspace_id: 'ws-a-other' }),
        );
      await store.importBundle({ ...parseBundle(smallBundle()), mcp_servers: entries });
    }, 120_000);
    afterAll(async () => {
      await store.close();
    });

    const scope = ['ws-a-team', 'ws-a-sub'];
    const expected = (latestOnly: boolean) => {
      const out: [string, string][] = [];
      for (let i = 0; i < SERVERS; i++) {
        const versions = i % 20 === 0 ? ['1.0.0', '1.1.0'] : ['1.0.0'];
        for (const v of latestOnly ? versions.slice(-1) : versions) out.push([name(i), v]);
      }
      return listOrder(out);
    };

    it('pages through every version, 97 at a time, with no duplicate and none missing', async () => {
      const pages = await walk(store, mcpQuery({ workspaceIds: scope, limit: 97 }));
      const seen = pages.flat().map((v) => `${v.name}@${v.version}`);
      expect(pages.slice(0, -1).every((p) => p.length === 97)).toBe(true);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expected(false));
    });

    it('pages through the latest version of each of the 10,000 servers', async () => {
      const pages = await walk(store, mcpQuery({ workspaceIds: scope, limit: 500, latestOnly: true }));
      const seen = pages.flat().map((v) => `${v.name}@${v.version}`);
      expect(seen).toHaveLength(SERVERS);
      expect(seen).toEqual(expected(true));
      expect(pages.flat().every((v) => v.is_latest && v.status === 'active')).toBe(true);
    });

    it('pages through a search, deleted versions included', async () => {
      const pages = await walk(
        store,
        mcpQuery({ workspaceIds: scope, limit: 64, search: 'S-1', includeDeleted: true }),
      );
      const seen = pages.flat().map((v) => `${v.name}@${v.version}`);
      const want: [string, string][] = [];
      for (let i = 0; i < SERVERS; i++) {
        if (!name(i).toLowerCase().includes('s-1')) continue;
        want.push([name(i), '1.0.0']);
        if (i % 20 === 0) want.push([name(i), '1.1.0']);
        if (i % 50 === 0) want.push([name(i), '2.0.0']);
      }
      expect(want.length).toBeGreaterThan(300);
      expect(seen).toEqual(listOrder(want));
    });
  });
}
