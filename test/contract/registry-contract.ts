/**
 * The registry store contract: every engine runs these assertions unchanged. `open` returns a
 * fresh, empty store each call. The first block loads the small fixture bundle (the shape HTTP
 * tests use); the second loads `queryBundle()`, built to pin down ordering, ranking and grouping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiDocumentJson } from '../../src/shared/api-document.ts';
import { relationshipForms } from '../../src/shared/relationship-forms.ts';
import { hashApiKey } from '../../src/shared/api-key.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { ArtifactQuery, ArtifactSort, RegistryStore } from '../../src/store/registry-port.ts';
import { TEST_API_KEY, TINY_PNG_BASE64, smallBundle } from '../fixtures/small-bundle.ts';

const ORG_A_WS = ['ws-a', 'ws-a-other', 'ws-a-sub', 'ws-a-team'];
const byName = [{ field: 'name' as const, desc: false }];
const T = (day: number) => `2026-01-${String(day).padStart(2, '0')}T00:00:00Z`;
const ids = (page: { items: { id: string }[] }) => page.items.map((a) => a.id);

/** One org, one workspace: tools t-a..t-e with crafted names, dates and servers, and three agents. */
function queryBundle() {
  const by = { created_by: 'q-user', updated_by: 'q-user' };
  const base = (id: string, kind: string, name: string, extra: Record<string, unknown>) => ({
    id,
    kind,
    name,
    artifact_status: 'active',
    source_type: 'git',
    extension: 'json',
    content_hash_hex: 'ab'.repeat(32),
    commit_ts: T(1),
    version_ordinal: 1,
    is_latest: true,
    workspace_id: 'ws-q',
    ...by,
    ...extra,
  });
  const tool = (
    id: string,
    name: string,
    display: string | undefined,
    created: number,
    updated: number,
    extra: Record<string, unknown>,
  ) =>
    base(id, 'tool', name, {
      ...(display === undefined ? {} : { display_name: display }),
      created_at: T(created),
      updated_at: T(updated),
      provider_kind: 'mcp',
      owner: 'team-x',
      is_system: false,
      ...extra,
    });
  const agent = (id: string, name: string, display: string, instructions: string) =>
    base(id, 'agent', name, { display_name: display, instructions, created_at: T(1), updated_at: T(1) });
  return {
    organizations: [{ id: 'org-q', name: 'Q', status: 'active' }],
    users: [{ id: 'q-user', org_id: 'org-q', created_at: T(1), updated_at: T(1) }],
    workspaces: [
      {
        id: 'ws-q',
        org_id: 'org-q',
        name: 'q',
        display_name: 'Q',
        kind: 'org',
        workspace_status: 'active',
        created_at: T(1),
        updated_at: T(1),
        ...by,
      },
      {
        id: 'ws-q2',
        org_id: 'org-q',
        parent_id: 'ws-q',
        name: 'q2',
        display_name: 'Q2',
        kind: 'team',
        workspace_status: 'active',
        created_at: T(1),
        updated_at: T(1),
        ...by,
      },
    ],
    artifacts: [
      tool('t-c', 'beta', 'Zed', 3, 5, { server_id: 'srv-2' }),
      tool('t-a', 'Alpha', undefined, 1, 9, { server_id: 'srv-1', owner: 'team-y' }),
      tool('t-b', 'beta', 'apple', 2, 2, { server_id: 'srv-1' }),
      tool('t-d', 'gamma', 'Mango', 2, 5, { provider_kind: 'builtin', is_system: true }),
      tool('t-e', 'delta', undefined, 4, 7, { server_id: 'srv-2', version_ordinal: 2 }),
      tool('t-e', 'delta', undefined, 4, 6, { server_id: 'srv-old', version_ordinal: 1, is_latest: false }),
      tool('t-f', 'epsilon', undefined, 1, 1, { server_id: 'srv-3', workspace_id: 'ws-q2' }),
      agent('ag-s1', 'Ledger Helper', 'Ledger Helper', 'Reconcile invoice totals every week.'),
      agent('ag-s2', 'Invoice Router', 'Router', 'Route documents to the right team.'),
      agent('ag-s3', 'Expense Checker', 'Invoice checker', 'Check expenses against policy.'),
    ],
  };
}

/**
 * The rows of a registry written before repositories existed (schema 001/002, both engines): two
 * artifacts, one whose document names a repository (unvalidated then) and one that names none.
 * `exec` runs SQL on the old database; the upgrade must fill the artifact's repository column.
 */
export async function writeOldArtifacts(engine: 'sqlite' | 'postgres', exec: (sql: string) => unknown): Promise<void> {
  const search = engine === 'postgres' ? [', search', ", to_tsvector('simple', 'x')"] : ['', ''];
  await exec(`INSERT INTO organizations VALUES ('org-o', 'O', 'active')`);
  await exec(`INSERT INTO workspaces (id, org_id, root_workspace_id, name, display_name, kind, workspace_status, created_at,
    created_by, updated_at, updated_by) VALUES ('ws-o', 'org-o', 'ws-o', 'o', 'O', 'org', 'active', 't', 'u', 't', 'u')`);
  // a-1 a whole document (given its ready-to-send form on open), a-2 one no schema admits (left without).
  const whole = {
    id: 'a-1',
    name: 'a-1',
    kind: 'tool',
    artifact_status: 'active',
    source_type: 'git',
    extension: 'json',
    content_hash_hex: 'ab'.repeat(32),
    commit_ts: 't',
    created_at: 't',
    created_by: 'u',
    updated_at: 't',
    updated_by: 'u',
    version_ordinal: 1,
    is_latest: true,
    workspace_id: 'ws-o',
    repo_id: 'repo-1',
    tool_name: 'a1',
    unlisted: 'kept in doc, not sent',
  };
  for (const [id, doc] of [
    ['a-1', JSON.stringify(whole)],
    ['a-2', '{"id":"a-2","repo_id":null}'],
  ]) {
    await exec(`INSERT INTO artifacts (id, version_ordinal, is_latest, kind, name, name_lower, workspace_id,
      artifact_status, created_at, created_by, updated_at, updated_by, doc${search[0]}) VALUES ('${id}', 1, 1 = 1,
      'tool', '${id}', '${id}', 'ws-o', 'active', 't', 'u', 't', 'u', '${doc}'${search[1]})`);
  }
}

/**
 * What a store opened over `writeOldArtifacts` answers: the repo_id of the documents, and the
 * ready-to-send form filled in (`apiJson`: the stored column by id) for the whole document only,
 * without the field no schema lists.
 */
export async function expectOldArtifactsUpgraded(
  store: RegistryStore,
  apiJson: (id: string) => Promise<string | null>,
): Promise<void> {
  expect((await store.listArtifactsOfRepos(['repo-1'])).map((a) => [a.id, a.repo_id])).toEqual([['a-1', 'repo-1']]);
  const [a1, a2] = await store.getArtifacts(['a-1', 'a-2']);
  expect(a2).not.toHaveProperty('repo_id');
  expect(await apiJson('a-2')).toBeNull();
  const { unlisted, ...listed } = a1?.doc ?? {};
  expect(unlisted).toBe('kept in doc, not sent');
  expect(JSON.parse((await apiJson('a-1')) ?? 'null')).toEqual(listed);
  expect(await store.getRepos(['repo-1'])).toEqual([]);
}

/** The ready form of tl-1 as a store answers it on the tool list page. */
async function readyTl1(store: RegistryStore) {
  const page = await store.findReadyArtifacts({
    kind: 'tool',
    workspaceIds: ['ws-a-team'],
    sorts: [{ field: 'name', desc: false }],
    limit: 10,
    offset: 0,
  });
  const tl1 = page.items.find((a) => a.id === 'tl-1');
  return JSON.parse(tl1?.api_json ?? 'null') as Record<string, unknown> | null;
}

/**
 * The ready-to-send forms follow their documents, on an engine (`open` opens a store over one
 * database, `exec` runs SQL on it beside the store, `column` reads tl-1's stored form):
 * a re-import of the same version with a changed document; a writer that changes a document
 * without its form (code from before the form, during a rolling deploy), whose row is answered
 * from the document and given its form again at the next open; forms written by other schemas
 * (another fingerprint), all written again at the next open.
 */
export async function expectReadyDocumentsKept(
  open: () => Promise<RegistryStore>,
  exec: (sql: string) => Promise<unknown>,
  column: () => Promise<string | null>,
): Promise<void> {
  let store = await open();
  try {
    await store.importBundle(parseBundle(smallBundle()));
    expect(await readyTl1(store)).toMatchObject({ id: 'tl-1', name: 'create_issue' });
    const renamed = smallBundle() as { artifacts: { id: string; display_name?: string; metadata?: unknown }[] };
    for (const a of renamed.artifacts) if (a.id === 'tl-1') Object.assign(a, { display_name: 'Renamed' });
    await store.importBundle(parseBundle(renamed));
    expect(await readyTl1(store)).toMatchObject({ id: 'tl-1', display_name: 'Renamed' });
    // A change the form does not show (a field no schema lists) keeps a form.
    for (const a of renamed.artifacts) if (a.id === 'tl-1') a.metadata = { team: 'payments' };
    await store.importBundle(parseBundle(renamed));
    expect(JSON.parse((await column()) ?? 'null')).toMatchObject({ display_name: 'Renamed' });

    // An older writer: the document alone.
    const doc = { ...(await store.getArtifacts(['tl-1']))[0]?.doc, display_name: 'Written by old code' };
    await exec(`UPDATE artifacts SET doc = '${JSON.stringify(doc)}' WHERE id = 'tl-1'`);
    expect(await column()).toBeNull();
    expect(await readyTl1(store)).toMatchObject({ id: 'tl-1', display_name: 'Written by old code' });
    await store.close();
    store = await open();
    expect(JSON.parse((await column()) ?? 'null')).toMatchObject({ display_name: 'Written by old code' });

    // Forms of other schemas: stale text under another fingerprint.
    await exec(`UPDATE artifacts SET api_json = '{"id":"tl-1","stale":true}' WHERE id = 'tl-1'`);
    await exec(`UPDATE ready_documents SET fingerprint = 'an older schema'`);
    const before = await store.generation();
    await store.close();
    store = await open();
    expect(await store.generation()).not.toBe(before);
    expect(await readyTl1(store)).toMatchObject({ id: 'tl-1', display_name: 'Written by old code' });
    expect(await column()).not.toContain('stale');
  } finally {
    await store.close();
  }
}

const EVERY_WS = [...ORG_A_WS, 'ws-b'];

/** A latest artifact as the REST lists read it, with its ready relationships (if it has them). */
async function readyOf(store: RegistryStore, id: string) {
  const page = await store.findReadyArtifacts({ workspaceIds: EVERY_WS, sorts: byName, limit: 200, offset: 0 });
  return page.items.find((a) => a.id === id);
}

/** Every latest artifact's ready relationships: what the shared builder makes of the port's relationships now. */
async function expectFormsCurrent(store: RegistryStore): Promise<void> {
  const page = await store.findReadyArtifacts({ workspaceIds: EVERY_WS, sorts: byName, limit: 200, offset: 0 });
  expect(page.items.length).toBeGreaterThan(10);
  for (const row of page.items) {
    const { relationships, otherEndWorkspaces } = await store.getRelationshipsWithEnds([row.id]);
    // Only an agent shows an identity: a row of another kind may have an identity row left over.
    const identities = row.kind === 'agent' ? await store.getIdentitiesOfAgents([row.id]) : [];
    expect(row.extras, row.id).toEqual(
      relationshipForms([row.id], relationships, otherEndWorkspaces, identities).get(row.id),
    );
  }
}

const formOf = async (store: RegistryStore, id: string) => {
  const form = (await readyOf(store, id))?.extras;
  if (form === undefined) return undefined;
  const parsed = JSON.parse(form.relationships) as {
    incoming: { from: { id: string } }[];
    outgoing: { to: { id: string } }[];
  };
  return {
    incoming: parsed.incoming.map((r) => r.from.id),
    outgoing: parsed.outgoing.map((r) => r.to.id),
    ends: form.endWorkspaces,
  };
};

/**
 * The ready relationship forms follow every change to what they are built from: imports moving an
 * other end, adding the artifact a relationship pointed to, adding relationships; an older writer
 * changing rows by SQL (the triggers drop the forms, reopening writes them); forms of another
 * fingerprint. A stale form would show a relationship to a reader who may not see its other end.
 */
export async function expectRelationshipFormsFollowChanges(
  open: () => Promise<RegistryStore>,
  exec: (sql: string) => Promise<unknown>,
): Promise<void> {
  let store = await open();
  try {
    const rel = (from: string, fromKind: string, to: string, extra: Record<string, unknown> = {}) => ({
      from: { id: from, kind: fromKind },
      to: { id: to, kind: 'tool' },
      rel_type: 'depends_on',
      provenance: 'declared',
      relationship_status: 'active',
      ...extra,
    });
    await store.importBundle(parseBundle(smallBundle()));
    await expectFormsCurrent(store);
    expect(await formOf(store, 'tl-1')).toEqual({ incoming: ['ag-1'], outgoing: [], ends: ['ws-a-team'] });

    // ag-1 moves to ws-a-other (a new latest version), tl-9 arrives in ws-a-sub, ag-3 links tl-1.
    const second = smallBundle();
    second.relationships.push(rel('tl-1', 'tool', 'tl-9'));
    second.relationships.push(rel('ag-3', 'agent', 'tl-1', { label: 'audits', attributes: { why: 'x' } }));
    const ag1 = second.artifacts.find((a) => a.id === 'ag-1' && a.version_ordinal === 2) as Record<string, unknown>;
    ag1.is_latest = false;
    second.artifacts.push({ ...ag1, is_latest: true, version_ordinal: 3, workspace_id: 'ws-a-other' } as never);
    const tl3 = second.artifacts.find((a) => a.id === 'tl-3') as Record<string, unknown>;
    second.artifacts.push({ ...tl3, id: 'tl-9', name: 'nine', workspace_id: 'ws-a-sub' } as never);
    await store.importBundle(parseBundle(second));
    await expectFormsCurrent(store);
    expect(await formOf(store, 'tl-1')).toEqual({
      incoming: ['ag-1', 'ag-3'],
      outgoing: ['tl-9'],
      ends: ['ws-a-other', 'ws-a-sub'],
    });
    expect((await formOf(store, 'tl-9'))?.ends).toEqual(['ws-a-team']);

    // An older writer, by SQL: a move and a removal drop the forms that depended on them.
    await exec("UPDATE artifacts SET workspace_id = 'ws-b' WHERE id = 'tl-9'");
    expect(await formOf(store, 'tl-1')).toBeUndefined();
    expect(await formOf(store, 'tl-9')).toBeUndefined();
    expect(await formOf(store, 'ag-3')).toBeDefined();
    await exec("DELETE FROM relationships WHERE from_id = 'ag-3' AND to_id = 'tl-1'");
    expect(await formOf(store, 'ag-3')).toBeUndefined();
    await store.close();
    store = await open();
    await expectFormsCurrent(store);
    expect(await formOf(store, 'tl-1')).toEqual({
      incoming: ['ag-1'],
      outgoing: ['tl-9'],
      ends: ['ws-a-other', 'ws-b'],
    });
    // An other end that is no longer a known (latest) artifact is in no form: no reader may see it.
    await exec("UPDATE artifacts SET is_latest = FALSE WHERE id = 'tl-9'");
    expect(await formOf(store, 'tl-1')).toBeUndefined();
    await store.close();
    store = await open();
    await expectFormsCurrent(store);
    expect(await formOf(store, 'tl-1')).toEqual({ incoming: ['ag-1'], outgoing: [], ends: ['ws-a-other'] });
    // A new version of tl-9 imported alone: the relationship to it, still stored, is back in tl-1's form.
    const again = smallBundle();
    await store.importBundle(
      parseBundle({
        organizations: again.organizations,
        workspaces: again.workspaces,
        users: again.users,
        artifacts: [{ ...tl3, id: 'tl-9', name: 'nine', workspace_id: 'ws-a-sub', version_ordinal: 2 }],
      }),
    );
    await expectFormsCurrent(store);
    expect(await formOf(store, 'tl-1')).toEqual({
      incoming: ['ag-1'],
      outgoing: ['tl-9'],
      ends: ['ws-a-other', 'ws-a-sub'],
    });

    // Identities: a rotated client id and a removed identity change ag-1's and ag-2's forms.
    const identityOf = async (id: string) =>
      JSON.parse((await readyOf(store, id))?.extras?.identity ?? 'null') as Record<string, unknown> | null;
    expect(await identityOf('ag-2')).toEqual({
      client_id: 'client-ag-2',
      credential_kind: 'api_key',
      api_key: `****${TEST_API_KEY.slice(-4)}`,
      expires_at: '2099-01-01T00:00:00Z',
    });
    const rotated = smallBundle();
    for (const a of rotated.artifacts as Record<string, unknown>[])
      if (a.id === 'ag-1' && a.identity !== undefined)
        a.identity = { client_id: 'client-ag-1b', credential_kind: 'oidc_client' };
    await store.importBundle(parseBundle(rotated));
    await expectFormsCurrent(store);
    expect(await identityOf('ag-1')).toEqual({ client_id: 'client-ag-1b', credential_kind: 'oidc_client' });
    await exec("DELETE FROM identities WHERE agent_id = 'ag-2'");
    expect((await readyOf(store, 'ag-2'))?.extras).toBeUndefined();
    await store.close();
    store = await open();
    await expectFormsCurrent(store);
    expect(await identityOf('ag-2')).toBeNull();

    // ag-2, with an identity again, re-imported as a tool: the identity row stays, a tool's form holds none.
    await exec(
      "INSERT INTO identities (agent_id, client_id, credential_kind) VALUES ('ag-2', 'client-ag-2c', 'oidc_client')",
    );
    const retyped = smallBundle();
    const tl1 = retyped.artifacts.find((a) => a.id === 'tl-1') as Record<string, unknown>;
    retyped.artifacts = retyped.artifacts.filter((a) => a.id !== 'ag-2');
    retyped.artifacts.push({
      ...tl1,
      id: 'ag-2',
      name: 'now_a_tool',
      workspace_id: 'ws-a-sub',
      version_ordinal: 2,
    } as never);
    await store.importBundle(parseBundle(retyped));
    expect((await readyOf(store, 'ag-2'))?.kind).toBe('tool');
    expect((await readyOf(store, 'ag-2'))?.extras?.identity).toBeUndefined();

    // A removed artifact leaves its neighbours' forms: ag-3 was tl-4's only other end.
    expect((await formOf(store, 'tl-4'))?.incoming).toEqual(['ag-3']);
    await exec("DELETE FROM artifacts WHERE id = 'ag-3'");
    expect(await formOf(store, 'tl-4')).toBeUndefined();
    await store.close();
    store = await open();
    await expectFormsCurrent(store);
    expect(await formOf(store, 'tl-4')).toEqual({ incoming: [], outgoing: [], ends: [] });

    // Forms of another fingerprint are written again.
    await exec(`UPDATE artifacts SET relationships_json = '{"stale":true}' WHERE id = 'tl-1'`);
    await exec(`UPDATE ready_documents SET fingerprint = 'an older schema'`);
    await store.close();
    store = await open();
    await expectFormsCurrent(store);

    // An older writer leaves two latest versions of ag-1: the store still opens and imports.
    await exec("UPDATE artifacts SET is_latest = TRUE WHERE id = 'ag-1'");
    await store.close();
    store = await open();
    await store.importBundle(parseBundle({ organizations: [{ id: 'org-z', name: 'Z', status: 'active' }] }));
    expect((await formOf(store, 'tl-1'))?.incoming).toEqual(['ag-1']);
    // Reads computed per request answer too (one workspace per end).
    expect((await store.getRelationshipsWithEnds(['tl-1'])).otherEndWorkspaces.has('ag-1')).toBe(true);
  } finally {
    await store.close();
  }
}

export function registryContract(engine: string, open: () => Promise<RegistryStore>): void {
  describe(`registry store contract: ${engine}`, () => {
    let store: RegistryStore;
    beforeAll(async () => {
      store = await open();
      expect(await store.isEmpty()).toBe(true);
      expect(await store.importBundle(parseBundle(smallBundle()))).toEqual({
        organizations: 2,
        users: 5,
        workspaces: 5,
        memberships: 4,
        projects: 1,
        repos: 3,
        artifacts: 12,
        relationships: 3,
        mcp_servers: 0,
      });
    });
    afterAll(async () => {
      await store.close();
    });

    it('answers ping, is no longer empty, and keeps its generation while nothing changes', async () => {
      await store.ping();
      expect(await store.isEmpty()).toBe(false);
      const generation = await store.generation();
      expect(typeof generation).toBe('string');
      await store.getArtifacts(['ag-1']);
      expect(await store.generation()).toBe(generation);
    });

    it('reads organizations and users by id, ignoring unknown ids', async () => {
      expect((await store.getOrganizations(['org-b', 'nope', 'org-a'])).map((o) => o.id)).toEqual(['org-a', 'org-b']);
      const [admin] = await store.getUsers(['u-admin']);
      expect(admin).toMatchObject({
        id: 'u-admin',
        org_id: 'org-a',
        name: 'Ada Admin',
        email: 'ada@a.example',
        status: 'active',
      });
      expect(admin?.enrichment?.profile?.title).toBe('Platform lead');
      const [none] = await store.getUsers(['u-none']);
      expect(none).toEqual({
        id: 'u-none',
        org_id: 'org-a',
        status: 'active',
        created_at: '2026-01-01T00:00:00Z',
        updated_at: '2026-01-01T00:00:00Z',
      });
      expect((await store.getUsers(['u-susp']))[0]?.status).toBe('suspended');
      expect(await store.getUsers([])).toEqual([]);
      expect(await store.getOrganizations(['nope'])).toEqual([]);
    });

    it('lists users of an org by id with total, limit and offset', async () => {
      const all = await store.listUsers('org-a', 50, 0);
      expect(all.items.map((u) => u.id)).toEqual(['u-admin', 'u-none', 'u-susp', 'u-viewer']);
      expect(all.total).toBe(4);
      expect((await store.listUsers('org-a', 2, 1)).items.map((u) => u.id)).toEqual(['u-none', 'u-susp']);
      expect(await store.listUsers('org-a', 0, 0)).toEqual({ items: [], total: 4 });
      expect(await store.listUsers('org-a', 10, 10)).toEqual({ items: [], total: 4 });
      expect(await store.listUsers('org-nope', 10, 0)).toEqual({ items: [], total: 0 });
    });

    it('holds the workspace tree with derived roots, memberships and projects', async () => {
      const tree = await store.listOrgWorkspaces('org-a');
      expect(tree.map((w) => w.id)).toEqual(ORG_A_WS);
      for (const w of tree) expect(w.root_workspace_id).toBe('ws-a');
      expect(tree.find((w) => w.id === 'ws-a-sub')?.parent_id).toBe('ws-a-team');
      expect(tree.find((w) => w.id === 'ws-a')).not.toHaveProperty('parent_id');
      expect(await store.getWorkspaces(['ws-b', 'nope'])).toMatchObject([
        { id: 'ws-b', root_workspace_id: 'ws-b', org_id: 'org-b', kind: 'org' },
      ]);
      expect(await store.getMembershipsOfUser('u-viewer')).toEqual([
        { workspace_id: 'ws-a-team', user_id: 'u-viewer', role: 'viewer' },
      ]);
      expect(await store.getMembershipsOfUser('u-none')).toEqual([]);
      expect(
        (await store.getMembershipsOfWorkspaces(['ws-a', 'ws-b'])).map((m) => [m.workspace_id, m.user_id, m.role]),
      ).toEqual([
        ['ws-a', 'u-admin', 'admin'],
        ['ws-a', 'u-susp', 'editor'],
        ['ws-b', 'u-b', 'admin'],
      ]);
      expect((await store.listProjects(['ws-a-team', 'ws-b'])).map((p) => p.id)).toEqual(['proj-a1']);
      expect(await store.listProjects([])).toEqual([]);
      expect(await store.getProjects(['proj-a1', 'nope'])).toMatchObject([
        { id: 'proj-a1', workspace_id: 'ws-a-team', knowledge_urls: ['https://wiki.a.example/billing'] },
      ]);
      expect(await store.countMembers(['ws-a', 'ws-a-sub'])).toEqual(new Map([['ws-a', 2]]));
    });

    it('holds source repositories by id and by workspace, and the artifacts synced from each', async () => {
      expect(await store.getRepos(['repo-b', 'nope', 'repo-a-team'])).toEqual([
        {
          id: 'repo-a-team',
          workspace_id: 'ws-a-team',
          name: 'team-agents',
          display_name: 'Team agents',
          source_uri: 'https://git.a.example/team-agents.git',
          default_branch: 'main',
          created_at: '2026-01-01T00:00:00Z',
          created_by: 'u-admin',
          updated_at: '2026-01-01T00:00:00Z',
          updated_by: 'u-admin',
        },
        {
          id: 'repo-b',
          workspace_id: 'ws-b',
          name: 'bots',
          display_name: 'Bots',
          source_uri: 'https://git.b.example/bots.git',
          created_at: '2026-01-01T00:00:00Z',
          created_by: 'u-b',
          updated_at: '2026-01-01T00:00:00Z',
          updated_by: 'u-b',
        },
      ]);
      expect((await store.getRepos(['repo-a-other']))[0]).not.toHaveProperty('default_branch');
      expect((await store.listRepos(['ws-a-other', 'ws-a-team', 'ws-a-sub'])).map((r) => r.id)).toEqual([
        'repo-a-other',
        'repo-a-team',
      ]);
      expect(await store.listRepos([])).toEqual([]);
      // A repository's artifacts sit in any workspace of its organization; latest versions only.
      const synced = await store.listArtifactsOfRepos(['repo-a-team', 'repo-a-other', 'nope']);
      expect(synced.map((a) => [a.id, a.repo_id, a.workspace_id])).toEqual([
        ['ag-2', 'repo-a-team', 'ws-a-sub'],
        ['ag-3', 'repo-a-team', 'ws-a-other'],
        ['tl-2', 'repo-a-other', 'ws-a-sub'],
      ]);
      expect(synced[0]?.doc.repo_id).toBe('repo-a-team');
      expect(await store.listArtifactsOfRepos([])).toEqual([]);
      const [ag1, ag2] = await store.getArtifacts(['ag-1', 'ag-2']);
      expect(ag1).not.toHaveProperty('repo_id');
      expect(ag2?.repo_id).toBe('repo-a-team');
    });

    it('returns latest versions by default and every version on request', async () => {
      const [ag1] = await store.getArtifacts(['ag-1']);
      expect(ag1).toMatchObject({
        id: 'ag-1',
        version_ordinal: 2,
        is_latest: true,
        kind: 'agent',
        project_id: 'proj-a1',
        display_name: 'Invoice Parser',
      });
      expect(ag1?.doc).toMatchObject({
        instructions: expect.stringContaining('supplier invoices'),
        version_label: 'v2',
        tools: [{ kind: 'builtin', name: 'web_search' }],
        model_id: 'gpt-4o',
      });
      for (const computed of ['identity', 'profile_image_base64', 'permissions', 'relationships'])
        expect(ag1?.doc).not.toHaveProperty(computed);
      expect((await store.getArtifacts(['tl-2', 'nope', 'ag-3'])).map((a) => a.id)).toEqual(['ag-3', 'tl-2']);
      expect((await store.getArtifacts(['tl-1']))[0]).toMatchObject({ kind: 'tool', server_id: 'srv-github' });
      const versions = await store.getArtifactVersions(['ag-2', 'ag-1']);
      expect(versions.map((v) => [v.id, v.version_ordinal, v.is_latest])).toEqual([
        ['ag-1', 1, false],
        ['ag-1', 2, true],
        ['ag-2', 1, true],
      ]);
      expect(versions[0]?.doc.instructions).toBe('Read invoices and extract line items.');
    });

    it('lists every latest artifact of a scope, optionally of one kind, by id', async () => {
      expect((await store.listArtifacts(ORG_A_WS, 'agent')).map((a) => [a.id, a.version_ordinal])).toEqual([
        ['ag-1', 2],
        ['ag-2', 1],
        ['ag-3', 1],
      ]);
      expect((await store.listArtifacts(['ws-a-team'])).map((a) => a.id)).toEqual(['ag-1', 'sk-1', 'tl-1', 'tl-3']);
      expect(await store.listArtifacts([], 'agent')).toEqual([]);
    });

    it('finds artifacts in scope only, ordered, paged, with totals', async () => {
      const tools = await store.findArtifacts({
        kind: 'tool',
        workspaceIds: ORG_A_WS,
        sorts: byName,
        limit: 50,
        offset: 0,
      });
      expect(tools.items.map((t) => t.name)).toEqual(['close_ticket', 'create_issue', 'list_pulls', 'search_tickets']);
      expect(tools.total).toBe(4);
      const page = await store.findArtifacts({
        kind: 'tool',
        workspaceIds: ORG_A_WS,
        sorts: [{ field: 'name', desc: true }],
        limit: 2,
        offset: 1,
      });
      expect(page.items.map((t) => t.name)).toEqual(['list_pulls', 'create_issue']);
      expect(page.total).toBe(4);
      // The total is the whole match count also where the page holds nothing: no rows asked, or past the end.
      const tool = (limit: number, offset: number) =>
        store.findArtifacts({ kind: 'tool', workspaceIds: ORG_A_WS, sorts: byName, limit, offset });
      expect(await tool(0, 0)).toEqual({ items: [], total: 4 });
      expect(await tool(10, 4)).toEqual({ items: [], total: 4 });
      expect(await tool(10, 9)).toEqual({ items: [], total: 4 });
      expect((await tool(1, 3)).items.map((t) => t.name)).toEqual(['search_tickets']);
      expect((await tool(1, 3)).total).toBe(4);
      expect(
        await store.findArtifacts({ kind: 'tool', workspaceIds: [], sorts: byName, limit: 50, offset: 0 }),
      ).toEqual({ items: [], total: 0 });
      const sub = await store.findArtifacts({ workspaceIds: ['ws-a-sub'], sorts: byName, limit: 50, offset: 0 });
      expect(sub.items.map((a) => a.id)).toEqual(['tl-2', 'ag-2']);
      const skills = await store.findArtifacts({
        kind: 'skill',
        workspaceIds: [...ORG_A_WS, 'ws-b'],
        sorts: byName,
        limit: 50,
        offset: 0,
      });
      expect(ids(skills)).toEqual(['sk-1', 'sk-b1']);
    });

    it('finds the same pages in the ready-to-send form: each row its stored api_json, no document', async () => {
      const queries: ArtifactQuery[] = [
        { kind: 'tool', workspaceIds: ORG_A_WS, sorts: byName, limit: 50, offset: 0 },
        { kind: 'tool', workspaceIds: ORG_A_WS, sorts: [{ field: 'name', desc: true }], limit: 2, offset: 1 },
        { kind: 'tool', workspaceIds: ORG_A_WS, sorts: byName, limit: 10, offset: 9 },
        { kind: 'tool', workspaceIds: ORG_A_WS, sorts: byName, limit: 0, offset: 0 },
        { kind: 'tool', workspaceIds: [], sorts: byName, limit: 50, offset: 0 },
        { workspaceIds: ['ws-a-sub'], sorts: byName, limit: 50, offset: 0 },
        {
          kind: 'agent',
          workspaceIds: ORG_A_WS,
          text: { query: 'invoices', strategy: 'keyword' },
          sorts: [{ field: 'relevance', desc: false }],
          limit: 10,
          offset: 0,
        },
      ];
      // The ready relationships: what the shared builder makes of the relationships the port gives.
      const formOf = async (id: string) => {
        const { relationships, otherEndWorkspaces } = await store.getRelationshipsWithEnds([id]);
        const identities = await store.getIdentitiesOfAgents([id]);
        return relationshipForms([id], relationships, otherEndWorkspaces, identities).get(id);
      };
      let withRelationships = 0;
      for (const query of queries) {
        const whole = await store.findArtifacts(query);
        const ready = await store.findReadyArtifacts(query);
        expect(ready.total).toBe(whole.total);
        const expected = [];
        for (const a of whole.items) {
          const extras = await formOf(a.id);
          if (extras?.relationships.includes('"count":0') === false) withRelationships++;
          expected.push({
            id: a.id,
            kind: a.kind,
            workspace_id: a.workspace_id,
            created_by: a.created_by,
            api_json: apiDocumentJson(a.kind, a.doc),
            extras,
          });
        }
        expect(ready.items).toEqual(expected);
      }
      expect(withRelationships).toBeGreaterThan(0);
      const [tool] = (await store.findReadyArtifacts(queries[5] as ArtifactQuery)).items;
      expect(tool?.id).toBe('tl-2');
      expect(JSON.parse(tool?.api_json ?? 'null')).toMatchObject({ id: 'tl-2', kind: 'tool', server_id: 'srv-github' });
    });

    it('searches by keyword (ranked full text), prefix and exact, case-insensitively and safely', async () => {
      const agents = (text: { query: string; strategy: 'keyword' | 'prefix' | 'exact' }) =>
        store.findArtifacts({
          kind: 'agent',
          workspaceIds: ORG_A_WS,
          text,
          sorts: [{ field: 'relevance', desc: false }],
          limit: 10,
          offset: 0,
        });
      expect(ids(await agents({ query: 'INVOICES', strategy: 'keyword' })).sort()).toEqual(['ag-1', 'ag-3']);
      expect(ids(await agents({ query: 'invoice parser', strategy: 'keyword' }))).toEqual(['ag-1']);
      expect(ids(await agents({ query: 'duplicate payments', strategy: 'keyword' }))).toEqual(['ag-3']);
      expect(ids(await agents({ query: 'supplier', strategy: 'keyword' }))).toEqual(['ag-1']);
      expect((await agents({ query: 'line items', strategy: 'keyword' })).items.map((a) => a.version_ordinal)).toEqual([
        2,
      ]);
      expect(ids(await agents({ query: 'inv', strategy: 'prefix' })).sort()).toEqual(['ag-1', 'ag-3']);
      expect(ids(await agents({ query: 'INVOICE P', strategy: 'prefix' }))).toEqual(['ag-1']);
      expect(ids(await agents({ query: 'travel planner', strategy: 'exact' }))).toEqual(['ag-2']);
      expect(ids(await agents({ query: 'TRAVEL', strategy: 'exact' }))).toEqual([]);
      for (const query of ['%', '_', '\\']) expect((await agents({ query, strategy: 'prefix' })).total).toBe(0);
      for (const query of [
        '"*" OR NEAR',
        '!!!',
        '"',
        'invoice*',
        'name:invoice',
        '(invoice',
        "'; DROP TABLE artifacts; --",
      ]) {
        const found = await agents({ query, strategy: 'keyword' });
        expect(found.total).toBe(found.items.length);
      }
      expect((await agents({ query: '!!!', strategy: 'keyword' })).total).toBe(0);
      const tools = await store.findArtifacts({
        kind: 'tool',
        workspaceIds: ORG_A_WS,
        text: { query: 'c_', strategy: 'prefix' },
        sorts: byName,
        limit: 10,
        offset: 0,
      });
      expect(tools.total).toBe(0);
      expect(
        ids(
          await store.findArtifacts({
            kind: 'tool',
            workspaceIds: ORG_A_WS,
            text: { query: 'create_', strategy: 'prefix' },
            sorts: byName,
            limit: 10,
            offset: 0,
          }),
        ),
      ).toEqual(['tl-1']);
    });

    it('finds a skill by exact name within a scope', async () => {
      expect((await store.findSkillByName(ORG_A_WS, 'summarize'))?.id).toBe('sk-1');
      expect((await store.findSkillByName(['ws-b'], 'summarize'))?.id).toBe('sk-b1');
      expect(await store.findSkillByName(ORG_A_WS, 'Summarize')).toBeNull();
      expect(await store.findSkillByName([], 'summarize')).toBeNull();
      expect(await store.findSkillByName(ORG_A_WS, 'Invoice Parser')).toBeNull();
    });

    it('aggregates tools into groups with count, distinct servers and latest update', async () => {
      const all = await store.aggregateTools({
        workspaceIds: ORG_A_WS,
        groupBy: [],
        filters: [],
        limit: 10,
        offset: 0,
      });
      expect(all).toEqual({
        total: 1,
        items: [{ key: {}, count: 4, servers: 2, latest_updated_at: '2026-01-01T00:00:00Z' }],
      });
      const byServer = await store.aggregateTools({
        workspaceIds: ORG_A_WS,
        groupBy: ['server_id', 'is_system'],
        filters: [],
        limit: 10,
        offset: 0,
      });
      expect(byServer.items.map((g) => [g.key, g.count])).toEqual([
        [{ server_id: 'srv-github', is_system: false }, 2],
        [{ server_id: 'srv-jira', is_system: false }, 2],
      ]);
      const filtered = await store.aggregateTools({
        workspaceIds: ORG_A_WS,
        groupBy: ['workspace_id'],
        filters: [{ field: 'server_id', values: ['srv-jira'] }],
        limit: 1,
        offset: 1,
      });
      expect(filtered.total).toBe(2);
      expect(filtered.items).toEqual([
        { key: { workspace_id: 'ws-a-team' }, count: 1, servers: 1, latest_updated_at: '2026-01-01T00:00:00Z' },
      ]);
      expect(
        await store.aggregateTools({
          workspaceIds: ['ws-a-sub'],
          groupBy: [],
          filters: [{ field: 'is_system', values: [true] }],
          limit: 10,
          offset: 0,
        }),
      ).toEqual({ items: [], total: 0 });
      expect(
        await store.aggregateTools({ workspaceIds: [], groupBy: ['owner'], filters: [], limit: 10, offset: 0 }),
      ).toEqual({ items: [], total: 0 });
      expect(
        await store.aggregateTools({ workspaceIds: ORG_A_WS, groupBy: ['owner'], filters: [], limit: 0, offset: 0 }),
      ).toEqual({ items: [], total: 1 });
    });

    it('lists the distinct tool refs (group key, tool name, server) of an aggregate, at most a limit', async () => {
      const q = { workspaceIds: ORG_A_WS, groupBy: [], filters: [], limit: 100, offset: 5 };
      expect(await store.toolRefs(q)).toEqual([
        { key: {}, tool: 'close_ticket', server: 'srv-jira' },
        { key: {}, tool: 'create_issue', server: 'srv-github' },
        { key: {}, tool: 'list_pulls', server: 'srv-github' },
        { key: {}, tool: 'search_tickets', server: 'srv-jira' },
      ]);
      expect(await store.toolRefs({ ...q, limit: 2 })).toHaveLength(2);
      expect(await store.toolRefs({ ...q, limit: 0 })).toEqual([]);
      expect(await store.toolRefs({ ...q, workspaceIds: [] })).toEqual([]);
      const grouped = await store.toolRefs({
        ...q,
        groupBy: ['workspace_id', 'is_system'],
        filters: [{ field: 'server_id', values: ['srv-github'] }],
      });
      expect(grouped).toEqual([
        { key: { workspace_id: 'ws-a-sub', is_system: false }, tool: 'list_pulls', server: 'srv-github' },
        { key: { workspace_id: 'ws-a-team', is_system: false }, tool: 'create_issue', server: 'srv-github' },
      ]);
    });

    it('counts latest artifacts by kind per workspace, project and creator', async () => {
      const byWorkspace = await store.countArtifacts('workspace', ['ws-a-team', 'ws-a', 'nope']);
      expect(byWorkspace).toEqual(new Map([['ws-a-team', { agent: 1, skill: 1, tool: 2 }]]));
      expect(await store.countArtifacts('project', ['proj-a1'])).toEqual(new Map([['proj-a1', { agent: 1 }]]));
      expect((await store.countArtifacts('creator', ['u-viewer', 'u-b'])).get('u-viewer')).toEqual({ agent: 1 });
      expect((await store.countArtifacts('creator', ['u-b'])).get('u-b')).toEqual({ agent: 1, skill: 1 });
      expect(await store.countArtifacts('creator', [])).toEqual(new Map());
      // Within a readable scope: only artifacts those workspaces hold.
      expect((await store.countArtifacts('creator', ['u-b'], ['ws-a-team', 'ws-a'])).get('u-b')).toBeUndefined();
      expect((await store.countArtifacts('creator', ['u-b'], ['ws-b'])).get('u-b')).toEqual({ agent: 1, skill: 1 });
      expect(await store.countArtifacts('project', ['proj-a1'], ['ws-a-team'])).toEqual(
        new Map([['proj-a1', { agent: 1 }]]),
      );
      expect(await store.countArtifacts('project', ['proj-a1'], ['ws-a-other'])).toEqual(new Map());
    });

    it('returns relationships touching the given artifacts, in both directions', async () => {
      const incoming = await store.getRelationships(['tl-1', 'sk-1']);
      expect(incoming.map((r) => [r.from.id, r.rel_type, r.to.id])).toEqual([
        ['ag-1', 'uses_skill', 'sk-1'],
        ['ag-1', 'uses_tool', 'tl-1'],
      ]);
      expect(incoming[0]).toMatchObject({
        from: { kind: 'agent' },
        to: { kind: 'skill' },
        provenance: 'observed',
        relationship_status: 'active',
        weight: 0.8,
      });
      expect(incoming[1]).not.toHaveProperty('weight');
      const outgoing = await store.getRelationships(['ag-1', 'ag-3']);
      expect(outgoing.map((r) => [r.from.id, r.to.id])).toEqual([
        ['ag-1', 'sk-1'],
        ['ag-1', 'tl-1'],
        ['ag-3', 'tl-4'],
      ]);
      expect(outgoing[2]).toMatchObject({ provenance: 'inferred', confidence: 0.6 });
      expect(await store.getRelationships(['ag-2', 'nope'])).toEqual([]);
    });

    it('returns relationships with the workspaces of their other ends, the ids asked left out', async () => {
      const asked = ['tl-1', 'sk-1', 'ag-3'];
      const found = await store.getRelationshipsWithEnds(asked);
      expect(found.relationships).toEqual(await store.getRelationships(asked));
      expect(found.relationships).toHaveLength(3);
      expect(found.otherEndWorkspaces).toEqual(
        new Map([
          ['ag-1', 'ws-a-team'],
          ['tl-4', 'ws-a-other'],
        ]),
      );
      expect((await store.getRelationshipsWithEnds(['ag-1'])).otherEndWorkspaces).toEqual(
        new Map([
          ['sk-1', 'ws-a-team'],
          ['tl-1', 'ws-a-team'],
        ]),
      );
      expect(await store.getRelationshipsWithEnds(['ag-2', 'nope'])).toEqual({
        relationships: [],
        otherEndWorkspaces: new Map(),
      });
    });

    it('keeps identities with hashed keys only, and finds them by client id or key hash', async () => {
      const found = await store.getIdentitiesOfAgents(['ag-2', 'ag-1', 'ag-3']);
      expect(found.map((i) => [i.agent_id, i.credential_kind, i.client_id])).toEqual([
        ['ag-1', 'oidc_client', 'client-ag-1'],
        ['ag-2', 'api_key', 'client-ag-2'],
      ]);
      expect(JSON.stringify(found)).not.toContain(TEST_API_KEY);
      expect(found[1]).toMatchObject({
        api_key_hash: hashApiKey(TEST_API_KEY),
        api_key_last4: TEST_API_KEY.slice(-4),
        expires_at: '2099-01-01T00:00:00Z',
      });
      expect(found[0]).not.toHaveProperty('api_key_hash');
      expect((await store.findIdentityByApiKeyHash(hashApiKey(TEST_API_KEY)))?.agent_id).toBe('ag-2');
      expect(await store.findIdentityByApiKeyHash(hashApiKey('agk_wrong'))).toBeNull();
      expect(await store.findIdentityByApiKeyHash(TEST_API_KEY)).toBeNull();
      expect((await store.findIdentityByClientId('client-ag-1'))?.agent_id).toBe('ag-1');
      expect(await store.findIdentityByClientId('client-nope')).toBeNull();
    });

    it('round-trips profile image bytes', async () => {
      const image = await store.getProfileImage('ag-1');
      expect(image?.content_type).toBe('image/png');
      expect(image?.bytes).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(image?.bytes ?? []).toString('base64')).toBe(TINY_PNG_BASE64);
      expect(await store.getProfileImage('ag-2')).toBeNull();
      expect(await store.getProfileImage('nope')).toBeNull();
    });

    it('re-imports idempotently: updates in place, moves the latest version, changes the generation', async () => {
      const before = await store.generation();
      const bundle = smallBundle();
      bundle.artifacts.push({
        ...(bundle.artifacts.find((a) => a.id === 'ag-2') as Record<string, unknown>),
        version_ordinal: 2,
        name: 'Trip Planner',
        display_name: 'Trip Planner',
        instructions: 'Plan trips.',
        repo_id: 'repo-a-other',
      } as never);
      (bundle.repos.find((r) => r.id === 'repo-a-other') as Record<string, unknown>).display_name = 'Moved tools';
      (bundle.artifacts.find((a) => a.id === 'ag-2' && a.version_ordinal === 1) as Record<string, unknown>).is_latest =
        false;
      (bundle.users.find((u) => u.id === 'u-viewer') as Record<string, unknown>).name = 'Victoria Viewer';
      (bundle.relationships[0] as Record<string, unknown>).provenance = 'observed';
      await store.importBundle(parseBundle(bundle));
      await store.importBundle(parseBundle(bundle));
      expect(await store.generation()).not.toBe(before);
      const versions = await store.getArtifactVersions(['ag-2']);
      expect(versions.map((v) => [v.version_ordinal, v.is_latest, v.name])).toEqual([
        [1, false, 'Travel Planner'],
        [2, true, 'Trip Planner'],
      ]);
      const found = await store.findArtifacts({
        kind: 'agent',
        workspaceIds: ORG_A_WS,
        text: { query: 'trip', strategy: 'keyword' },
        sorts: [],
        limit: 10,
        offset: 0,
      });
      expect(found.items.map((a) => [a.id, a.version_ordinal])).toEqual([['ag-2', 2]]);
      expect(
        (
          await store.findArtifacts({
            kind: 'agent',
            workspaceIds: ORG_A_WS,
            text: { query: 'book travel', strategy: 'keyword' },
            sorts: [],
            limit: 10,
            offset: 0,
          })
        ).total,
      ).toBe(0);
      expect(
        (await store.findArtifacts({ kind: 'agent', workspaceIds: ORG_A_WS, sorts: byName, limit: 10, offset: 0 }))
          .total,
      ).toBe(3);
      expect((await store.listUsers('org-a', 50, 0)).total).toBe(4);
      expect((await store.getUsers(['u-viewer']))[0]?.name).toBe('Victoria Viewer');
      expect(await store.getRelationships(['tl-1'])).toMatchObject([{ provenance: 'observed' }]);
      expect((await store.getIdentitiesOfAgents(['ag-2']))[0]?.api_key_hash).toBe(hashApiKey(TEST_API_KEY));
      expect(await store.countMembers(['ws-a'])).toEqual(new Map([['ws-a', 2]]));
      // The new latest version moved ag-2 to another repository; the repository was updated in place.
      expect((await store.listArtifactsOfRepos(['repo-a-team'])).map((a) => a.id)).toEqual(['ag-3']);
      expect((await store.listArtifactsOfRepos(['repo-a-other'])).map((a) => [a.id, a.version_ordinal])).toEqual([
        ['ag-2', 2],
        ['tl-2', 1],
      ]);
      expect((await store.getRepos(['repo-a-other'])).map((r) => r.display_name)).toEqual(['Moved tools']);
      expect(versions.map((v) => v.repo_id)).toEqual(['repo-a-team', 'repo-a-other']);
    });

    it('stores nothing of a bundle whose write fails part-way', async () => {
      const raw = smallBundle();
      (raw.users.find((u) => u.id === 'u-admin') as Record<string, unknown>).name = 'Changed';
      raw.organizations.push({ id: 'org-x', name: 'X', status: 'active' });
      raw.workspaces.push({
        id: 'ws-x',
        org_id: 'org-x',
        name: 'x',
        display_name: 'X',
        kind: 'org',
        workspace_status: 'active',
        created_at: T(1),
        created_by: 'u',
        updated_at: T(1),
        updated_by: 'u',
      });
      const bundle = parseBundle(raw);
      // A membership naming a user that exists nowhere breaks a foreign key at write time, after the rest was written.
      bundle.memberships.push({ workspace_id: 'ws-x', user_id: 'ghost', role: 'admin' });
      await expect(store.importBundle(bundle)).rejects.toThrow();
      expect(await store.getOrganizations(['org-x'])).toEqual([]);
      expect(await store.getWorkspaces(['ws-x'])).toEqual([]);
      expect((await store.getUsers(['u-admin']))[0]?.name).toBe('Ada Admin');
      await store.ping();
    });
  });

  describe(`registry store contract: ${engine}, ordering, ranking and grouping`, () => {
    let store: RegistryStore;
    beforeAll(async () => {
      store = await open();
      await store.importBundle(parseBundle(queryBundle()));
    });
    afterAll(async () => {
      await store.close();
    });

    const tools = (sorts: ArtifactSort[], extra: Partial<ArtifactQuery> = {}) =>
      store.findArtifacts({ kind: 'tool', workspaceIds: ['ws-q'], sorts, limit: 50, offset: 0, ...extra });
    const sort = (spec: string): ArtifactSort[] =>
      spec.split(',').map((s) => ({ field: s.replace(/^-/, '') as ArtifactSort['field'], desc: s.startsWith('-') }));

    it.each([
      ['name', ['t-a', 't-b', 't-c', 't-e', 't-d']],
      ['-name', ['t-d', 't-e', 't-b', 't-c', 't-a']],
      ['display_name', ['t-b', 't-d', 't-c', 't-a', 't-e']],
      ['-display_name', ['t-c', 't-d', 't-b', 't-a', 't-e']],
      ['created_at', ['t-a', 't-b', 't-d', 't-c', 't-e']],
      ['-created_at', ['t-e', 't-c', 't-b', 't-d', 't-a']],
      ['updated_at', ['t-b', 't-c', 't-d', 't-e', 't-a']],
      ['-updated_at', ['t-a', 't-e', 't-c', 't-d', 't-b']],
      ['-updated_at,-name', ['t-a', 't-e', 't-d', 't-c', 't-b']],
      ['relevance', ['t-a', 't-b', 't-c', 't-d', 't-e']],
    ])('sorts by %s (name case-insensitive, display_name nulls last, ties by id)', async (spec, expected) => {
      expect(ids(await tools(sort(spec)))).toEqual(expected);
    });

    it('orders by id without sorts, and pages past the end with the total', async () => {
      expect(ids(await tools([]))).toEqual(['t-a', 't-b', 't-c', 't-d', 't-e']);
      expect(await tools([], { limit: 2, offset: 10 })).toEqual({ items: [], total: 5 });
      expect(await tools([], { limit: 0 })).toEqual({ items: [], total: 5 });
      expect(ids(await tools(sort('name'), { limit: 2, offset: 3 }))).toEqual(['t-e', 't-d']);
      expect(ids(await tools([], { workspaceIds: ['ws-q', 'ws-q2'] }))).toEqual([
        't-a',
        't-b',
        't-c',
        't-d',
        't-e',
        't-f',
      ]);
    });

    it('ranks keyword hits: name, then display name, then instructions; desc reverses', async () => {
      const search = (desc: boolean) =>
        store.findArtifacts({
          kind: 'agent',
          workspaceIds: ['ws-q'],
          text: { query: 'invoice', strategy: 'keyword' },
          sorts: [{ field: 'relevance', desc }],
          limit: 10,
          offset: 0,
        });
      expect(ids(await search(false))).toEqual(['ag-s2', 'ag-s3', 'ag-s1']);
      expect(ids(await search(true))).toEqual(['ag-s1', 'ag-s3', 'ag-s2']);
      const prefix = await store.findArtifacts({
        kind: 'agent',
        workspaceIds: ['ws-q'],
        text: { query: 'Invoice', strategy: 'prefix' },
        sorts: sort('name'),
        limit: 10,
        offset: 0,
      });
      expect(ids(prefix)).toEqual(['ag-s3', 'ag-s2']);
      const exact = await store.findArtifacts({
        kind: 'agent',
        workspaceIds: ['ws-q'],
        text: { query: 'ROUTER', strategy: 'exact' },
        sorts: [],
        limit: 10,
        offset: 0,
      });
      expect(ids(exact)).toEqual(['ag-s2']);
    });

    it('groups only latest tool versions; missing keys are null and sort last', async () => {
      const byServer = await store.aggregateTools({
        workspaceIds: ['ws-q'],
        groupBy: ['server_id'],
        filters: [],
        limit: 10,
        offset: 0,
      });
      expect(byServer).toEqual({
        total: 3,
        items: [
          { key: { server_id: 'srv-1' }, count: 2, servers: 1, latest_updated_at: T(9) },
          { key: { server_id: 'srv-2' }, count: 2, servers: 1, latest_updated_at: T(7) },
          { key: { server_id: null }, count: 1, servers: 0, latest_updated_at: T(5) },
        ],
      });
      const bySystem = await store.aggregateTools({
        workspaceIds: ['ws-q', 'ws-q2'],
        groupBy: ['is_system', 'provider_kind'],
        filters: [],
        limit: 10,
        offset: 0,
      });
      expect(bySystem.items).toEqual([
        { key: { is_system: false, provider_kind: 'mcp' }, count: 5, servers: 3, latest_updated_at: T(9) },
        { key: { is_system: true, provider_kind: 'builtin' }, count: 1, servers: 0, latest_updated_at: T(5) },
      ]);
      const anyOf = await store.aggregateTools({
        workspaceIds: ['ws-q'],
        groupBy: ['owner'],
        filters: [
          { field: 'server_id', values: ['srv-1', 'srv-old'] },
          { field: 'is_system', values: [false] },
        ],
        limit: 10,
        offset: 0,
      });
      expect(anyOf.items.map((g) => [g.key.owner, g.count])).toEqual([
        ['team-x', 1],
        ['team-y', 1],
      ]);
      const paged = await store.aggregateTools({
        workspaceIds: ['ws-q'],
        groupBy: ['server_id'],
        filters: [],
        limit: 1,
        offset: 2,
      });
      expect(paged.total).toBe(3);
      expect(paged.items.map((g) => g.key)).toEqual([{ server_id: null }]);
      expect(
        await store.aggregateTools({ workspaceIds: ['ws-q'], groupBy: [], filters: [], limit: 10, offset: 1 }),
      ).toEqual({ items: [], total: 1 });
    });

    it('stops answering once closed', async () => {
      const other = await open();
      await other.close();
      await expect(other.ping()).rejects.toThrow();
    });
  });
}
