/**
 * Ready-to-send artifacts: the tool list and the agent search answer stored JSON text
 * with the per-caller fields spliced in (artifacts/present.ts `presentArtifactJson`). Each
 * item must carry exactly the members the object path gives, serialized by the route's response
 * schema, for every caller: a document field no schema lists stays out, permissions follow the
 * caller's role, the identity is masked, relationships keep only readable ends.
 */
import fastJson from 'fast-json-stringify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAccess } from '../../src/auth/access.ts';
import { agentSchema, toolSchema } from '../../src/domain/artifact-schemas.ts';
import { loadArtifactExtras, presentArtifact, presentArtifactsJson } from '../../src/artifacts/present.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { TEST_API_KEY, smallBundle } from '../fixtures/small-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

type Item = Record<string, unknown> & { id: string };
const headersOf = (user: string, app: TestApp = t) => app.auth(user, user === 'u-b' ? 'org-b' : 'org-a');

/** The small bundle with document fields no response schema lists (kept for export, never listed). */
function bundleWithUnlistedFields() {
  const b = smallBundle() as { artifacts: Record<string, unknown>[] };
  for (const a of b.artifacts) {
    a.metadata = { team: 'payments' };
    a.source_metadata = { sha: 'abc' };
    if (a.kind === 'tool') a.instructions = 'an agent field on a tool';
    // An own `__proto__` member, as JSON.parse makes it: never a prototype of the stored document.
    Object.defineProperty(a, '__proto__', {
      value: { source_uri: 'from-proto', version_label: 'v-proto' },
      enumerable: true,
      configurable: true,
      writable: true,
    });
    if (a.kind === 'agent') a.input_schema = { type: 'object' };
  }
  return b;
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ bundle: bundleWithUnlistedFields(), env: { RESPONSE_CACHE_ENTRIES: '0' } });
});
afterAll(async () => {
  await t.close();
});

/** What the object path answers for these items: presentArtifact, then the response schema's serializer. */
async function objectPath(
  user: string,
  items: Item[],
  schema: typeof agentSchema | typeof toolSchema,
  app: TestApp = t,
) {
  const caller = await app.authenticator.authenticate((await headersOf(user, app)).authorization);
  const access = await loadAccess(app.registry, caller);
  const rows = await app.registry.getArtifacts(items.map((i) => i.id));
  const extras = await loadArtifactExtras(app.registry, access, rows);
  const serialize = fastJson({ ...schema, required: [...schema.required] });
  const byId = new Map(rows.map((r) => [r.id, JSON.parse(serialize(presentArtifact(r, access, extras))) as Item]));
  return items.map((i) => byId.get(i.id));
}

describe('ready-to-send artifacts answer what the object path answers', () => {
  for (const user of ['u-admin', 'u-viewer', 'u-b']) {
    it(`the tool list for ${user}`, async () => {
      const res = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=200', headers: await headersOf(user) });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const items = res.json<{ items: Item[] }>().items;
      expect(items.length).toBeGreaterThan(0);
      expect(items).toEqual(await objectPath(user, items, toolSchema));
      // Each per-caller member once per item (a stored form never carries one).
      expect(res.body.split('"permissions":').length - 1).toBe(items.length);
      expect(res.body).not.toContain('from-proto');
      for (const item of items) {
        expect(item).not.toHaveProperty('instructions');
        expect(item).not.toHaveProperty('metadata');
        expect(item.permissions).toMatchObject({ can_read: true });
      }
    });

    it(`the agent search for ${user}`, async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/agent/v1/agents/search',
        headers: await headersOf(user),
        payload: { limit: 100 },
      });
      expect(res.statusCode).toBe(200);
      const items = res.json<{ items: Item[] }>().items;
      expect(items.length).toBeGreaterThan(0);
      expect(items).toEqual(await objectPath(user, items, agentSchema));
      expect(res.body.split('"permissions":').length - 1).toBe(items.length);
      expect(res.body).not.toContain('from-proto');
      expect(res.body).not.toContain(TEST_API_KEY);
      for (const item of items) expect(item).not.toHaveProperty('input_schema');
    });
  }

  it('per-caller fields differ by caller: the admin edits ag-2, the viewer only reads it; both see its key masked', async () => {
    const search = async (user: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/agent/v1/agents/search',
          headers: await t.auth(user),
          payload: { query: 'Travel Planner', strategy: 'exact' },
        })
      ).json<{ items: Item[] }>().items;
    const [asAdmin] = await search('u-admin');
    const [asViewer] = await search('u-viewer');
    expect(asAdmin?.permissions).toMatchObject({ can_edit: true, can_read: true });
    expect(asViewer?.permissions).toMatchObject({ can_edit: false, can_read: true });
    expect(asAdmin?.identity).toEqual({
      client_id: 'client-ag-2',
      credential_kind: 'api_key',
      api_key: `****${TEST_API_KEY.slice(-4)}`,
      expires_at: '2099-01-01T00:00:00Z',
    });
  });
});

describe('ready relationships after imports change what they show', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { RESPONSE_CACHE_ENTRIES: '0' } });
  });
  afterAll(async () => {
    await app.close();
  });

  const tools = async (user: string) => {
    const res = await app.app.inject({
      method: 'GET',
      url: '/mcp/v1/tools?limit=200',
      headers: await headersOf(user, app),
    });
    expect(res.statusCode).toBe(200);
    const items = res.json<{ items: Item[] }>().items;
    expect(items).toEqual(await objectPath(user, items, toolSchema, app));
    return items;
  };
  const incomingOf = (items: Item[], id: string) =>
    (items.find((i) => i.id === id)?.relationships as { incoming: { from: { id: string } }[] }).incoming.map(
      (r) => r.from.id,
    );

  it('a form whose other ends are only partly readable is not shown: the viewer gets the readable ones', async () => {
    const linked = smallBundle();
    linked.relationships.push({
      from: { id: 'ag-3', kind: 'agent' }, // in ws-a-other, which the viewer does not read
      to: { id: 'tl-1', kind: 'tool' },
      rel_type: 'uses_tool',
      provenance: 'declared',
      relationship_status: 'active',
    });
    await app.registry.importBundle(parseBundle(linked));
    expect(incomingOf(await tools('u-viewer'), 'tl-1')).toEqual(['ag-1']);
    expect(incomingOf(await tools('u-admin'), 'tl-1')).toEqual(['ag-1', 'ag-3']);
  });

  it('a row that is no agent never shows an identity, even one its stored form still holds', async () => {
    const caller = await app.authenticator.authenticate((await headersOf('u-admin', app)).authorization);
    const access = await loadAccess(app.registry, caller);
    const extras = {
      relationships: '{"count":0,"incoming":[],"outgoing":[]}',
      endWorkspaces: [],
      identity: '{"client_id":"c"}',
    };
    const row = { id: 'x-1', workspace_id: 'ws-a-team', created_by: 'u-admin', api_json: '{"id":"x-1"}' };
    const [tool, agent] = await presentArtifactsJson(app.registry, access, [
      { ...row, kind: 'tool', extras },
      { ...row, kind: 'agent', extras },
    ]);
    expect(JSON.parse(tool ?? '{}')).not.toHaveProperty('identity');
    expect(JSON.parse(agent ?? '{}')).toHaveProperty('identity', { client_id: 'c' });
  });

  it('an other end moved out of the viewer’s workspaces leaves the viewer’s lists, not the admin’s', async () => {
    expect(incomingOf(await tools('u-viewer'), 'tl-1')).toEqual(['ag-1']);
    const moved = smallBundle();
    const ag1 = moved.artifacts.find((a) => a.id === 'ag-1' && a.version_ordinal === 2) as Record<string, unknown>;
    ag1.is_latest = false;
    moved.artifacts.push({ ...ag1, is_latest: true, version_ordinal: 3, workspace_id: 'ws-a-other' } as never);
    await app.registry.importBundle(parseBundle(moved));
    expect(incomingOf(await tools('u-viewer'), 'tl-1')).toEqual([]);
    expect(incomingOf(await tools('u-admin'), 'tl-1')).toEqual(['ag-1', 'ag-3']);
  });
});
