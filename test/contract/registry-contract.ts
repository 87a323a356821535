/**
 * The registry store contract: every engine runs these assertions unchanged (Kysely-style).
 * `open` returns a fresh, empty store; the suite loads the small fixture bundle into it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey, parseBundle } from '../../src/store/bundle.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { TEST_API_KEY, TINY_PNG_BASE64, smallBundle } from '../fixtures/small-bundle.ts';

const ORG_A_WS = ['ws-a', 'ws-a-other', 'ws-a-sub', 'ws-a-team'];
const byName = [{ field: 'name' as const, desc: false }];

export function registryContract(engine: string, open: () => Promise<RegistryStore>): void {
  describe(`registry store contract: ${engine}`, () => {
    let store: RegistryStore;
    beforeAll(async () => {
      store = await open();
      expect(await store.isEmpty()).toBe(true);
      await store.importBundle(parseBundle(smallBundle()));
    });
    afterAll(async () => { await store.close(); });

    it('answers ping, is no longer empty, and has a generation', async () => {
      await store.ping();
      expect(await store.isEmpty()).toBe(false);
      expect(typeof (await store.generation())).toBe('string');
    });

    it('reads organizations and users by id, ignoring unknown ids', async () => {
      expect((await store.getOrganizations(['org-b', 'nope', 'org-a'])).map((o) => o.id)).toEqual(['org-a', 'org-b']);
      const [admin] = await store.getUsers(['u-admin']);
      expect(admin).toMatchObject({ id: 'u-admin', org_id: 'org-a', name: 'Ada Admin', status: 'active' });
      expect(admin?.enrichment?.profile?.title).toBe('Platform lead');
      expect((await store.getUsers(['u-susp']))[0]?.status).toBe('suspended');
      expect(await store.getUsers([])).toEqual([]);
    });

    it('lists users of an org by id with total, limit and offset', async () => {
      const all = await store.listUsers('org-a', 50, 0);
      expect(all.items.map((u) => u.id)).toEqual(['u-admin', 'u-none', 'u-susp', 'u-viewer']);
      expect(all.total).toBe(4);
      expect((await store.listUsers('org-a', 2, 1)).items.map((u) => u.id)).toEqual(['u-none', 'u-susp']);
      expect(await store.listUsers('org-a', 0, 0)).toEqual({ items: [], total: 4 });
    });

    it('holds the workspace tree with derived roots, memberships and projects', async () => {
      const tree = await store.listOrgWorkspaces('org-a');
      expect(tree.map((w) => w.id)).toEqual(ORG_A_WS);
      for (const w of tree) expect(w.root_workspace_id).toBe('ws-a');
      expect(tree.find((w) => w.id === 'ws-a-sub')?.parent_id).toBe('ws-a-team');
      expect(tree.find((w) => w.id === 'ws-a')).not.toHaveProperty('parent_id');
      expect((await store.getWorkspaces(['ws-b']))[0]?.root_workspace_id).toBe('ws-b');
      expect(await store.getMembershipsOfUser('u-viewer')).toEqual([{ workspace_id: 'ws-a-team', user_id: 'u-viewer', role: 'viewer' }]);
      expect((await store.getMembershipsOfWorkspaces(['ws-a'])).map((m) => m.user_id)).toEqual(['u-admin', 'u-susp']);
      expect((await store.listProjects(['ws-a-team'])).map((p) => p.id)).toEqual(['proj-a1']);
      expect((await store.getProjects(['proj-a1']))[0]?.knowledge_urls).toEqual(['https://wiki.a.example/billing']);
      expect(await store.countMembers(['ws-a', 'ws-a-sub'])).toEqual(new Map([['ws-a', 2]]));
    });

    it('returns latest versions by default and every version on request', async () => {
      const [ag1] = await store.getArtifacts(['ag-1']);
      expect(ag1).toMatchObject({ id: 'ag-1', version_ordinal: 2, is_latest: true, kind: 'agent', project_id: 'proj-a1' });
      expect(ag1?.doc.instructions).toContain('supplier invoices');
      expect(ag1?.doc).not.toHaveProperty('identity');
      expect(ag1?.doc).not.toHaveProperty('profile_image_base64');
      const versions = await store.getArtifactVersions(['ag-1']);
      expect(versions.map((v) => [v.version_ordinal, v.is_latest])).toEqual([[1, false], [2, true]]);
      expect(await store.getArtifactWorkspaceIds(['ag-1', 'tl-b1', 'nope'])).toEqual(new Map([['ag-1', 'ws-a-team'], ['tl-b1', 'ws-b']]));
    });

    it('finds artifacts in scope only, ordered, paged, with totals', async () => {
      const tools = await store.findArtifacts({ kind: 'tool', workspaceIds: ORG_A_WS, sorts: byName, limit: 50, offset: 0 });
      expect(tools.items.map((t) => t.name)).toEqual(['close_ticket', 'create_issue', 'list_pulls', 'search_tickets']);
      expect(tools.total).toBe(4);
      const page = await store.findArtifacts({ kind: 'tool', workspaceIds: ORG_A_WS, sorts: [{ field: 'name', desc: true }], limit: 2, offset: 1 });
      expect(page.items.map((t) => t.name)).toEqual(['list_pulls', 'create_issue']);
      expect(page.total).toBe(4);
      expect(await store.findArtifacts({ kind: 'tool', workspaceIds: [], sorts: byName, limit: 50, offset: 0 })).toEqual({ items: [], total: 0 });
      const sub = await store.findArtifacts({ workspaceIds: ['ws-a-sub'], sorts: byName, limit: 50, offset: 0 });
      expect(sub.items.map((a) => a.id)).toEqual(['tl-2', 'ag-2']);
    });

    it('searches by keyword (ranked full text), prefix and exact, case-insensitively', async () => {
      const agents = (text: { query: string; strategy: 'keyword' | 'prefix' | 'exact' }) =>
        store.findArtifacts({ kind: 'agent', workspaceIds: ORG_A_WS, text, sorts: [{ field: 'relevance', desc: false }], limit: 10, offset: 0 });
      expect((await agents({ query: 'INVOICES', strategy: 'keyword' })).items.map((a) => a.id).sort()).toEqual(['ag-1', 'ag-3']);
      const ranked = await agents({ query: 'invoice parser', strategy: 'keyword' });
      expect(ranked.items[0]?.id).toBe('ag-1');
      expect((await agents({ query: 'duplicate payments', strategy: 'keyword' })).items.map((a) => a.id)).toEqual(['ag-3']);
      expect((await agents({ query: 'inv', strategy: 'prefix' })).items.map((a) => a.id).sort()).toEqual(['ag-1', 'ag-3']);
      expect((await agents({ query: 'travel planner', strategy: 'exact' })).items.map((a) => a.id)).toEqual(['ag-2']);
      expect((await agents({ query: '%', strategy: 'prefix' })).total).toBe(0);
      expect((await agents({ query: '"*" OR NEAR', strategy: 'keyword' })).total).toBe(0);
      expect((await agents({ query: '!!!', strategy: 'keyword' })).total).toBe(0);
    });

    it('finds a skill by exact name within a scope', async () => {
      expect((await store.findSkillByName(ORG_A_WS, 'summarize'))?.id).toBe('sk-1');
      expect((await store.findSkillByName(['ws-b'], 'summarize'))?.id).toBe('sk-b1');
      expect(await store.findSkillByName(ORG_A_WS, 'Summarize')).toBeNull();
    });

    it('aggregates tools into groups with count, distinct servers and latest update', async () => {
      const all = await store.aggregateTools({ workspaceIds: ORG_A_WS, groupBy: [], filters: [], limit: 10, offset: 0 });
      expect(all).toEqual({ total: 1, items: [{ key: {}, count: 4, servers: 2, latest_updated_at: '2026-01-01T00:00:00Z' }] });
      const byServer = await store.aggregateTools({ workspaceIds: ORG_A_WS, groupBy: ['server_id', 'is_system'], filters: [], limit: 10, offset: 0 });
      expect(byServer.items.map((g) => [g.key, g.count])).toEqual([
        [{ server_id: 'srv-github', is_system: false }, 2],
        [{ server_id: 'srv-jira', is_system: false }, 2],
      ]);
      const filtered = await store.aggregateTools({ workspaceIds: ORG_A_WS, groupBy: ['workspace_id'], filters: [{ field: 'server_id', values: ['srv-jira'] }], limit: 1, offset: 1 });
      expect(filtered.total).toBe(2);
      expect(filtered.items).toEqual([{ key: { workspace_id: 'ws-a-team' }, count: 1, servers: 1, latest_updated_at: '2026-01-01T00:00:00Z' }]);
      expect(await store.aggregateTools({ workspaceIds: ['ws-a-sub'], groupBy: [], filters: [{ field: 'is_system', values: [true] }], limit: 10, offset: 0 })).toEqual({ items: [], total: 0 });
    });

    it('counts latest artifacts by kind per workspace, project and creator', async () => {
      expect((await store.countArtifacts('workspace', ['ws-a-team'])).get('ws-a-team')).toEqual({ agent: 1, skill: 1, tool: 2 });
      expect((await store.countArtifacts('project', ['proj-a1'])).get('proj-a1')).toEqual({ agent: 1 });
      expect((await store.countArtifacts('creator', ['u-viewer'])).get('u-viewer')).toEqual({ agent: 1 });
    });

    it('returns relationships touching the given artifacts, in both directions', async () => {
      const rels = await store.getRelationships(['tl-1', 'sk-1']);
      expect(rels.map((r) => [r.from.id, r.rel_type, r.to.id])).toEqual([['ag-1', 'uses_skill', 'sk-1'], ['ag-1', 'uses_tool', 'tl-1']]);
      expect(rels[0]).toMatchObject({ provenance: 'observed', relationship_status: 'active', weight: 0.8 });
      expect(rels[1]).not.toHaveProperty('weight');
    });

    it('keeps identities with hashed keys only, and finds them by client id or key hash', async () => {
      const ids = await store.getIdentitiesOfAgents(['ag-1', 'ag-2']);
      expect(ids.map((i) => [i.agent_id, i.credential_kind])).toEqual([['ag-1', 'oidc_client'], ['ag-2', 'api_key']]);
      expect(JSON.stringify(ids)).not.toContain(TEST_API_KEY);
      expect((await store.findIdentityByApiKeyHash(hashApiKey(TEST_API_KEY)))?.agent_id).toBe('ag-2');
      expect((await store.findIdentityByApiKeyHash(hashApiKey('agk_wrong')))).toBeNull();
      expect((await store.findIdentityByClientId('client-ag-1'))?.agent_id).toBe('ag-1');
      expect(ids[1]?.api_key_last4).toBe(TEST_API_KEY.slice(-4));
    });

    it('round-trips profile image bytes', async () => {
      const image = await store.getProfileImage('ag-1');
      expect(image?.content_type).toBe('image/png');
      expect(Buffer.from(image?.bytes ?? []).toString('base64')).toBe(TINY_PNG_BASE64);
      expect(await store.getProfileImage('ag-2')).toBeNull();
    });

    it('re-imports idempotently: updates in place, moves the latest version, changes the generation', async () => {
      const before = await store.generation();
      const bundle = smallBundle();
      bundle.artifacts.push({ ...(bundle.artifacts.find((a) => a.id === 'ag-2') as Record<string, unknown>), version_ordinal: 2, name: 'Trip Planner' } as never);
      (bundle.artifacts.find((a) => a.id === 'ag-2' && a.version_ordinal === 1) as Record<string, unknown>).is_latest = false;
      await store.importBundle(parseBundle(bundle));
      await store.importBundle(parseBundle(bundle));
      expect(await store.generation()).not.toBe(before);
      const versions = await store.getArtifactVersions(['ag-2']);
      expect(versions.map((v) => [v.version_ordinal, v.is_latest, v.name])).toEqual([[1, false, 'Travel Planner'], [2, true, 'Trip Planner']]);
      const found = await store.findArtifacts({ kind: 'agent', workspaceIds: ORG_A_WS, text: { query: 'trip', strategy: 'keyword' }, sorts: [], limit: 10, offset: 0 });
      expect(found.items.map((a) => [a.id, a.version_ordinal])).toEqual([['ag-2', 2]]);
      expect((await store.findArtifacts({ kind: 'agent', workspaceIds: ORG_A_WS, sorts: byName, limit: 10, offset: 0 })).total).toBe(3);
      expect((await store.listUsers('org-a', 50, 0)).total).toBe(4);
    });

    it('stores nothing of a bundle whose write fails part-way', async () => {
      const bundle = parseBundle({
        organizations: [{ id: 'org-x', name: 'X', status: 'active' }],
        workspaces: [{ id: 'ws-x', org_id: 'org-x', name: 'x', display_name: 'X', kind: 'org', workspace_status: 'active', created_at: 't', created_by: 'u', updated_at: 't', updated_by: 'u' }],
        // A membership naming a user that exists nowhere breaks a foreign key at write time.
        memberships: [],
      });
      bundle.memberships.push({ workspace_id: 'ws-x', user_id: 'ghost', role: 'admin' });
      await expect(store.importBundle(bundle)).rejects.toThrow();
      expect(await store.getOrganizations(['org-x'])).toEqual([]);
      expect(await store.getWorkspaces(['ws-x'])).toEqual([]);
    });
  });
}
