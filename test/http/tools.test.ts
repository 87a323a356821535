import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { expectProblem } from '../helpers/problem.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const REQUIRED = [
  'id',
  'name',
  'kind',
  'artifact_status',
  'source_type',
  'extension',
  'content_hash_hex',
  'commit_ts',
  'created_at',
  'created_by',
  'updated_at',
  'updated_by',
  'version_ordinal',
  'is_latest',
  'workspace_id',
];

async function list(user: string, qs = '') {
  return t.app.inject({ method: 'GET', url: `/mcp/v1/tools${qs}`, headers: await t.auth(user) });
}

describe('GET /mcp/v1/tools (operation 6)', () => {
  it("lists the readable tools of the caller's org, latest versions, ordered by name", async () => {
    const res = await list('u-admin');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    const ids = body.items.map((i: { id: string }) => i.id).sort();
    expect(ids).toEqual(['tl-1', 'tl-2', 'tl-3', 'tl-4']);
    expect(body.page).toEqual({ limit: 50, offset: 0, total: 4 });
    const names = body.items.map((i: { name: string }) => i.name);
    expect(names).toEqual([...names].sort());
    for (const item of body.items) {
      for (const f of REQUIRED) expect(item, `${item.id}.${f}`).toHaveProperty(f);
      expect(item.kind).toBe('tool');
      expect(item.is_latest).toBe(true);
      expect(typeof item.server_id).toBe('string');
      expect(typeof item.tool_name).toBe('string');
      expect(item.permissions).toMatchObject({ can_read: true, can_edit: true });
      expect(item.relationships).toHaveProperty('count');
    }
  });

  it('shows a viewer only its subtree and read-only permissions', async () => {
    const body = (await list('u-viewer')).json();
    const admin = (await list('u-admin')).json();
    const expected = admin.items
      .filter((i: { workspace_id: string }) => ['ws-a-team', 'ws-a-sub'].includes(i.workspace_id))
      .map((i: { id: string }) => i.id);
    expect(body.items.map((i: { id: string }) => i.id)).toEqual(expected);
    expect(body.page.total).toBe(expected.length);
    for (const item of body.items)
      expect(item.permissions).toMatchObject({ can_read: true, can_edit: false, can_delete: false });
  });

  it('gives a member of no workspace an empty list, and org B only its own tool', async () => {
    expect((await list('u-none')).json()).toEqual({ items: [], page: { limit: 50, offset: 0, total: 0 } });
    const b2 = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await t.auth('u-b', 'org-b') });
    expect(b2.json().items.map((i: { id: string }) => i.id)).toEqual(['tl-b1']);
  });

  it('pages with limit and offset, clamps large limits, limit=0 gives only the total', async () => {
    const all = (await list('u-admin')).json().items.map((i: { id: string }) => i.id);
    const p = (await list('u-admin', '?limit=2&offset=1')).json();
    expect(p.page).toEqual({ limit: 2, offset: 1, total: 4 });
    expect(p.items.map((i: { id: string }) => i.id)).toEqual(all.slice(1, 3));
    expect((await list('u-admin', '?limit=100000')).json().page.limit).toBe(200);
    expect((await list('u-admin', '?limit=0')).json()).toEqual({ items: [], page: { limit: 0, offset: 0, total: 4 } });
    const past = (await list('u-admin', '?offset=10')).json();
    expect(past).toEqual({ items: [], page: { limit: 50, offset: 10, total: 4 } });
  });

  it.each([['?limit=-1'], ['?limit=abc'], ['?offset=-5'], ['?offset=1.5'], ['?limit=1&bogus=2']])(
    'rejects %s with 400 invalid_query',
    async (qs) => {
      expectProblem(await list('u-admin', qs), 400, 'invalid_query');
    },
  );

  it('needs a bearer token', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/mcp/v1/tools' }), 401, 'token_missing');
    expectProblem(
      await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: { authorization: 'Basic abc' } }),
      401,
      'token_missing',
    );
  });
});

describe('POST /mcp/v1/tools/aggregate (operation 3)', () => {
  async function agg(body: unknown, user = 'u-admin') {
    return t.app.inject({
      method: 'POST',
      url: '/mcp/v1/tools/aggregate',
      headers: await t.auth(user),
      payload: body as object,
    });
  }

  it('accepts the empty object: one group over every readable tool', async () => {
    const res = await agg({});
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.page).toEqual({ limit: 50, offset: 0, total: 1 });
    expect(body.groups).toHaveLength(1);
    expect(body.groups[0].key).toEqual({});
    expect(body.groups[0].metrics.count).toBe(4);
    expect(body.groups[0].metrics.servers).toBe(2);
    expect(typeof body.groups[0].metrics.latest_updated_at).toBe('string');
  });

  it('groups by server_id with counts that add up, filters, and selected metrics', async () => {
    const tools = (await list('u-admin')).json().items as { server_id: string }[];
    const expected = new Map<string, number>();
    for (const tool of tools) expected.set(tool.server_id, (expected.get(tool.server_id) ?? 0) + 1);
    const body = (await agg({ group_by: ['server_id'] })).json();
    expect(body.page.total).toBe(expected.size);
    for (const g of body.groups) expect(g.metrics.count).toBe(expected.get(g.key.server_id));
    const counts = body.groups.map((g: { metrics: { count: number } }) => g.metrics.count);
    expect(counts).toEqual([...counts].sort((a: number, b: number) => b - a));

    const filtered = (
      await agg({ group_by: ['server_id'], filters: { server_id: 'srv-github' }, metrics: ['count'] })
    ).json();
    expect(filtered.groups).toEqual([
      { key: { server_id: 'srv-github' }, metrics: { count: expected.get('srv-github') } },
    ]);
  });

  it('limits to the readable scope and to a workspace subtree', async () => {
    const viewer = (await agg({}, 'u-viewer')).json();
    const viewerTools = (await list('u-viewer')).json().page.total;
    expect(viewer.groups[0].metrics.count).toBe(viewerTools);
    const sub = (await agg({ workspace_id: 'ws-a-sub', group_by: ['workspace_id'] })).json();
    for (const g of sub.groups) expect(g.key.workspace_id).toBe('ws-a-sub');
    expectProblem(await agg({ workspace_id: 'ws-b' }), 404, 'not_found');
  });

  it('rejects bad input with the precedence of DESIGN §7', async () => {
    const headers = { ...(await t.auth('u-admin')) };
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/mcp/v1/tools/aggregate',
        headers: { ...headers, 'content-type': 'text/plain' },
        payload: '{}',
      }),
      415,
      'unsupported_content_type',
    );
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/mcp/v1/tools/aggregate',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: '{"group_by":',
      }),
      400,
      'invalid_json',
    );
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/mcp/v1/tools/aggregate',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: '[]',
      }),
      400,
      'invalid_request',
    );
    const one = expectProblem(await agg({ group_by: ['colour'] }), 422, 'invalid_field');
    expect(one.field).toBe('/group_by/0');
    const several = expectProblem(await agg({ group_by: ['colour'], limit: -1 }), 422, 'validation_failed');
    expect(several.errors.map((e: { field: string }) => e.field).sort()).toEqual(['/group_by/0', '/limit']);
  });
});
