/**
 * The MCP server store contract (src/store/mcp-server-port.ts): every registry engine runs these
 * assertions unchanged. `open` returns a fresh, empty store each call; the store gets the small
 * fixture bundle, then each test publishes servers of its own, under names no other test uses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { McpServerVersion } from '../../src/domain/types.ts';
import {
  McpServerConflictError,
  type McpServerQuery,
  type NewMcpServerVersion,
} from '../../src/store/mcp-server-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';

const ORG_A_WS = ['ws-a', 'ws-a-other', 'ws-a-sub', 'ws-a-team'];
const day = (d: number) => `2026-02-${String(d).padStart(2, '0')}T00:00:00.000Z`;

/** A version of `name` to publish in org-a's ws-a-team (unless `extra` says otherwise). */
function newVersion(
  id: string,
  name: string,
  version: string,
  extra: Partial<NewMcpServerVersion> = {},
): NewMcpServerVersion {
  return {
    id,
    org_id: 'org-a',
    workspace_id: 'ws-a-team',
    server: { name, description: `The ${name} server`, version },
    status: 'active',
    published_at: day(1),
    created_by: 'u-admin',
    ...extra,
  };
}

export const mcpQuery = (extra: Partial<McpServerQuery> = {}): McpServerQuery => ({
  workspaceIds: ORG_A_WS,
  latestOnly: false,
  includeDeleted: false,
  limit: 1000,
  ...extra,
});

/** `name@version`, and a star on the latest. */
export const labels = (versions: readonly McpServerVersion[]) =>
  versions.map((v) => `${v.name}@${v.version}${v.is_latest ? '*' : ''}`);

const bytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function mcpServerContract(engine: string, open: () => Promise<RegistryStore>): void {
  describe(`MCP server store contract: ${engine}`, () => {
    let store: RegistryStore;
    beforeAll(async () => {
      store = await open();
      await store.importBundle(parseBundle(smallBundle()));
    });
    afterAll(async () => {
      await store.close();
    });

    const publishAll = async (versions: NewMcpServerVersion[]) => {
      const out: McpServerVersion[] = [];
      for (const v of versions) out.push(await store.publishMcpServer(v));
      return out;
    };
    const refusal = async (v: NewMcpServerVersion): Promise<string> => {
      try {
        await store.publishMcpServer(v);
        return 'published';
      } catch (err) {
        return err instanceof McpServerConflictError ? err.reason : String(err);
      }
    };

    it('publishes a version and reads it back as published, times in ISO 8601 UTC', async () => {
      const server = {
        $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
        name: 'io.github.acme/read-back',
        title: 'Read back',
        description: 'Reads back',
        version: '1.0.0',
        repository: { url: 'https://github.com/acme/read-back', source: 'github' },
        packages: [
          { registryType: 'npm', identifier: '@acme/read-back', version: '1.0.0', transport: { type: 'stdio' } },
        ],
      };
      const before = await store.generation();
      const stored = await store.publishMcpServer(
        newVersion('srv-read', server.name, '1.0.0', { server, published_at: '2026-02-01T01:00:00+01:00' }),
      );
      expect(stored).toEqual({
        id: 'srv-read',
        org_id: 'org-a',
        workspace_id: 'ws-a-team',
        name: 'io.github.acme/read-back',
        version: '1.0.0',
        server,
        status: 'active',
        is_latest: true,
        published_at: '2026-02-01T00:00:00.000Z',
        updated_at: '2026-02-01T00:00:00.000Z',
        status_changed_at: '2026-02-01T00:00:00.000Z',
        created_by: 'u-admin',
        updated_by: 'u-admin',
      });
      expect(JSON.stringify(stored.server)).toBe(JSON.stringify(server));
      expect(await store.generation()).not.toBe(before);
      expect(await store.getMcpServers('org-a', ['srv-read', 'srv-unknown'])).toEqual([stored]);
      expect(await store.getMcpServerHistory('org-a', ['srv-read'])).toEqual([stored]);
      expect(await store.getMcpServerVersionsByName(['ws-a-team'], server.name)).toEqual([stored]);
      expect(await store.getMcpServerVersionsByName(['ws-a-sub'], server.name)).toEqual([]);
    });

    it('lists by name, then version, in byte order, and pages by keyset', async () => {
      await publishAll([
        newVersion('ord-b', 'io.order/b', '1.0.0'),
        newVersion('ord-a', 'io.order/a', '1.9.0'),
        newVersion('ord-B', 'io.order/B', '1.0.0'),
        newVersion('ord-a', 'io.order/a', '10.0.0'),
        newVersion('ord-ab', 'io.order/a-b', '1.0.0'),
        newVersion('ord-a', 'io.order/a', '1.10.0'),
        newVersion('ord-a', 'io.order/a', '2.0.0'),
      ]);
      const all = await store.listMcpServerVersions(mcpQuery({ search: 'io.order/' }));
      expect(labels(all)).toEqual([
        'io.order/B@1.0.0*',
        'io.order/a@1.10.0',
        'io.order/a@1.9.0',
        'io.order/a@10.0.0*',
        'io.order/a@2.0.0',
        'io.order/a-b@1.0.0*',
        'io.order/b@1.0.0*',
      ]);
      const pages: string[][] = [];
      let after: McpServerQuery['after'];
      for (;;) {
        const page = await store.listMcpServerVersions(
          mcpQuery({ search: 'io.order/', limit: 2, ...(after && { after }) }),
        );
        if (page.length === 0 || pages.length > 10) break;
        pages.push(labels(page));
        const last = page[page.length - 1] as McpServerVersion;
        after = { name: last.name, version: last.version };
      }
      expect(pages.map((p) => p.length)).toEqual([2, 2, 2, 1]);
      expect(pages.flat()).toEqual(labels(all));
      expect(labels(await store.listMcpServerVersions(mcpQuery({ search: 'io.order/', latestOnly: true })))).toEqual([
        'io.order/B@1.0.0*',
        'io.order/a@10.0.0*',
        'io.order/a-b@1.0.0*',
        'io.order/b@1.0.0*',
      ]);
      expect(await store.listMcpServerVersions(mcpQuery({ search: 'io.order/', limit: 0 }))).toEqual([]);
    });

    it('marks the semver-greatest version latest, whatever the publish order', async () => {
      const published = await publishAll(
        ['1.0.0', '2.0.0-rc.1', '1.10.0', '2.0.0', '1.2.0'].map((v, i) =>
          newVersion('srv-semver', 'io.semver/x', v, { published_at: day(i + 1) }),
        ),
      );
      expect(published.map((v) => v.is_latest)).toEqual([true, true, false, true, false]);
      const history = await store.getMcpServerHistory('org-a', ['srv-semver']);
      expect(labels(history)).toEqual([
        'io.semver/x@1.0.0',
        'io.semver/x@2.0.0-rc.1',
        'io.semver/x@1.10.0',
        'io.semver/x@2.0.0*',
        'io.semver/x@1.2.0',
      ]);
      // A version that stops being latest was updated by the publish that took its place.
      expect(history.map((v) => v.updated_at)).toEqual([day(2), day(4), day(3), day(4), day(5)]);
      expect(history.map((v) => v.published_at)).toEqual([day(1), day(2), day(3), day(4), day(5)]);
      expect(labels(await store.getMcpServers('org-a', ['srv-semver']))).toEqual(['io.semver/x@2.0.0*']);
    });

    it('marks the last published version latest when a version is not semver', async () => {
      const published = await publishAll(
        ['1.0.0', '2025.01.15', '0.5.0'].map((v, i) =>
          newVersion('srv-dated', 'io.dated/x', v, { published_at: day(i + 1) }),
        ),
      );
      expect(published.map((v) => v.is_latest)).toEqual([true, true, true]);
      expect(labels(await store.getMcpServerHistory('org-a', ['srv-dated']))).toEqual([
        'io.dated/x@1.0.0',
        'io.dated/x@2025.01.15',
        'io.dated/x@0.5.0*',
      ]);
    });

    it('never marks a deleted version latest, and leaves deleted versions out unless asked', async () => {
      await publishAll([
        newVersion('srv-del', 'io.deleted/x', '1.0.0', { published_at: day(1) }),
        newVersion('srv-del', 'io.deleted/x', '2.0.0', { published_at: day(2), status: 'deprecated' }),
        newVersion('srv-del', 'io.deleted/x', '3.0.0', { published_at: day(3), status: 'deleted' }),
        newVersion('srv-del-only', 'io.deleted/only', '1.0.0', { status: 'deleted' }),
      ]);
      const list = (extra: Partial<McpServerQuery>) =>
        store.listMcpServerVersions(mcpQuery({ search: 'io.deleted/', ...extra })).then(labels);
      expect(await list({})).toEqual(['io.deleted/x@1.0.0', 'io.deleted/x@2.0.0*']);
      expect(await list({ includeDeleted: true })).toEqual([
        'io.deleted/only@1.0.0',
        'io.deleted/x@1.0.0',
        'io.deleted/x@2.0.0*',
        'io.deleted/x@3.0.0',
      ]);
      expect(await list({ latestOnly: true, includeDeleted: true })).toEqual(['io.deleted/x@2.0.0*']);
      expect(labels(await store.getMcpServers('org-a', ['srv-del', 'srv-del-only']))).toEqual(['io.deleted/x@2.0.0*']);
      expect(labels(await store.getMcpServerHistory('org-a', ['srv-del-only']))).toEqual(['io.deleted/only@1.0.0']);
      expect(
        (await store.getMcpServerVersionsByName(ORG_A_WS, 'io.deleted/x')).map((v) => `${v.version} ${v.status}`),
      ).toEqual(['1.0.0 active', '2.0.0 deprecated', '3.0.0 deleted']);
    });

    it('filters by updated_since, at or after the instant, whatever its offset', async () => {
      await publishAll([
        newVersion('srv-since-a', 'io.since/a', '1.0.0', { published_at: day(10) }),
        newVersion('srv-since-b', 'io.since/b', '1.0.0', { published_at: day(11) }),
        newVersion('srv-since-c', 'io.since/c', '1.0.0', { published_at: day(12) }),
      ]);
      const since = (updatedSince: string) =>
        store.listMcpServerVersions(mcpQuery({ search: 'io.since/', updatedSince })).then((l) => l.map((v) => v.name));
      expect(await since('2026-02-11T00:00:00Z')).toEqual(['io.since/b', 'io.since/c']);
      expect(await since('2026-02-11T01:00:00+01:00')).toEqual(['io.since/b', 'io.since/c']);
      expect(await since('2026-02-11T00:00:00.001Z')).toEqual(['io.since/c']);
      expect(await since('2026-03-01T00:00:00Z')).toEqual([]);
    });

    it('searches a substring of the name, ASCII letters in any case, % _ and \\ as themselves', async () => {
      const names = ['a_b', 'axb', '100%', '1000', 'back\\slash', 'bac', 'UPPER'].map((n) => `io.srch/${n}`);
      await publishAll(
        names.map((n, i) => newVersion(`srv-srch-${String(i)}`, n, '1.0.0', { workspace_id: 'ws-a-sub' })),
      );
      const search = (text: string) =>
        store
          .listMcpServerVersions(mcpQuery({ workspaceIds: ['ws-a-sub'], search: text }))
          .then((l) => l.map((v) => v.name.slice('io.srch/'.length)));
      expect(await search('_')).toEqual(['a_b']);
      expect(await search('a_b')).toEqual(['a_b']);
      expect(await search('%')).toEqual(['100%']);
      expect(await search('0%')).toEqual(['100%']);
      expect(await search('\\')).toEqual(['back\\slash']);
      expect(await search('upper')).toEqual(['UPPER']);
      expect(await search('SRCH/BAC')).toEqual(['bac', 'back\\slash']);
      expect(await search('')).toEqual([...names.map((n) => n.slice('io.srch/'.length))].sort(bytes));
      expect(await search('nowhere')).toEqual([]);
    });

    it('reads nothing with an empty scope, and nothing of another organization', async () => {
      await store.publishMcpServer(
        newVersion('srv-orgb', 'io.orgb/x', '1.0.0', { org_id: 'org-b', workspace_id: 'ws-b', created_by: 'u-b' }),
      );
      expect(await store.listMcpServerVersions(mcpQuery({ workspaceIds: [] }))).toEqual([]);
      expect(await store.listMcpServerVersions(mcpQuery({ search: 'io.orgb/' }))).toEqual([]);
      expect(
        labels(await store.listMcpServerVersions(mcpQuery({ workspaceIds: ['ws-b'], search: 'io.orgb/' }))),
      ).toEqual(['io.orgb/x@1.0.0*']);
      expect(await store.getMcpServerVersionsByName([], 'io.orgb/x')).toEqual([]);
      expect(await store.getMcpServerVersionsByName(ORG_A_WS, 'io.orgb/x')).toEqual([]);
      expect(await store.getMcpServers('org-a', ['srv-orgb'])).toEqual([]);
      expect(await store.getMcpServerHistory('org-a', ['srv-orgb'])).toEqual([]);
      expect(await store.getMcpServers('org-b', [])).toEqual([]);
      expect(labels(await store.getMcpServers('org-b', ['srv-orgb']))).toEqual(['io.orgb/x@1.0.0*']);
    });

    it('holds the same id, or the same name, in two organizations as two servers', async () => {
      const inB = { org_id: 'org-b', workspace_id: 'ws-b', created_by: 'u-b' };
      await publishAll([
        newVersion('srv-twin', 'io.twin/a', '1.0.0'),
        newVersion('srv-twin', 'io.twin/b', '2.0.0', inB),
        newVersion('srv-twin-b', 'io.twin/a', '1.0.0', inB),
      ]);
      expect(labels(await store.getMcpServers('org-a', ['srv-twin', 'srv-twin-b']))).toEqual(['io.twin/a@1.0.0*']);
      expect(labels(await store.getMcpServers('org-b', ['srv-twin', 'srv-twin-b']))).toEqual([
        'io.twin/b@2.0.0*',
        'io.twin/a@1.0.0*',
      ]);
      expect(labels(await store.getMcpServerHistory('org-b', ['srv-twin']))).toEqual(['io.twin/b@2.0.0*']);
      expect((await store.getMcpServerVersionsByName(['ws-b'], 'io.twin/a')).map((v) => v.id)).toEqual(['srv-twin-b']);
    });

    it('refuses a version that exists, and a name or an id that is another server', async () => {
      await publishAll([
        newVersion('srv-cx', 'io.conflict/x', '1.0.0'),
        newVersion('srv-cy', 'io.conflict/y', '1.0.0'),
      ]);
      expect(await refusal(newVersion('srv-cx', 'io.conflict/x', '1.0.0', { published_at: day(9) }))).toBe(
        'version_exists',
      );
      // The name in another workspace, the id in another workspace, the id with another name, the name with another id.
      expect(await refusal(newVersion('srv-cx', 'io.conflict/x', '2.0.0', { workspace_id: 'ws-a-sub' }))).toBe(
        'name_taken',
      );
      expect(await refusal(newVersion('srv-other', 'io.conflict/x', '2.0.0', { workspace_id: 'ws-a-sub' }))).toBe(
        'name_taken',
      );
      expect(await refusal(newVersion('srv-cx', 'io.conflict/z', '1.0.0'))).toBe('name_taken');
      expect(await refusal(newVersion('srv-cx', 'io.conflict/y', '2.0.0'))).toBe('name_taken');
      expect(await refusal(newVersion('srv-new', 'io.conflict/x', '2.0.0'))).toBe('name_taken');
      expect(labels(await store.getMcpServerHistory('org-a', ['srv-cx', 'srv-cy', 'srv-new', 'srv-other']))).toEqual([
        'io.conflict/x@1.0.0*',
        'io.conflict/y@1.0.0*',
      ]);
      expect(await store.listMcpServerVersions(mcpQuery({ search: 'io.conflict/z' }))).toEqual([]);
      // The next version of the same server, in its workspace, is taken.
      expect(await refusal(newVersion('srv-cx', 'io.conflict/x', '1.0.1', { published_at: day(2) }))).toBe('published');
    });
  });
}
