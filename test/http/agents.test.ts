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

async function search(body: unknown, user = 'u-admin', org = 'org-a') {
  return t.app.inject({
    method: 'POST',
    url: '/agent/v1/agents/search',
    headers: await t.auth(user, org),
    payload: body as object,
  });
}
const ids = (res: { json(): { items: { id: string }[] } }) => res.json().items.map((i) => i.id);

describe('POST /agent/v1/agents/search (operation 2)', () => {
  it('with {} lists every readable agent by name, latest versions only', async () => {
    const res = await search({});
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.items.map((i: { id: string }) => i.id).sort()).toEqual(['ag-1', 'ag-2', 'ag-3']);
    const names = body.items.map((i: { name: string }) => i.name);
    expect(names).toEqual([...names].sort());
    expect(body.page).toEqual({ limit: 20, offset: 0, total: 3 });
    const ag1 = body.items.find((i: { id: string }) => i.id === 'ag-1');
    expect(ag1).toMatchObject({ kind: 'agent', is_latest: true, version_ordinal: 2, workspace_id: 'ws-a-team' });
    expect(body.page).not.toHaveProperty('next_cursor');
  });

  it("ranks keyword matches and never returns another org's agents", async () => {
    const res = await search({ query: 'invoice' });
    expect(ids(res).sort()).toEqual(['ag-1', 'ag-3']);
    expect(res.json().page.total).toBe(2);
    const b = await search({ query: 'invoice' }, 'u-b', 'org-b');
    expect(ids(b)).toEqual(['ag-b1']);
  });

  it('supports the prefix and exact strategies, case-insensitively', async () => {
    expect(ids(await search({ query: 'trav', strategy: 'prefix' }))).toEqual(['ag-2']);
    expect(ids(await search({ query: 'INVOICE PARSER', strategy: 'exact' }))).toEqual(['ag-1']);
    expect(ids(await search({ query: 'invoice', strategy: 'exact' }))).toEqual([]);
  });

  it('treats search syntax in the query as plain text', async () => {
    for (const query of ['"', 'invoice OR', 'NEAR(a b)', '*', "'; DROP TABLE artifacts; --", '-name']) {
      const res = await search({ query });
      expect(res.statusCode, query).toBe(200);
    }
  });

  it('sorts by the requested fields', async () => {
    const asc = ids(await search({ sorts: ['name'] }));
    const desc = ids(await search({ sorts: ['-name'] }));
    expect(desc).toEqual([...asc].reverse());
  });

  it('pages by offset and by cursor, clamps limit to 100', async () => {
    const all = ids(await search({}));
    const second = await search({ limit: 1, offset: 1 });
    expect(ids(second)).toEqual([all[1]]);
    expect(second.json().page).toEqual({ limit: 1, offset: 1, total: 3 });
    expect((await search({ limit: 1000 })).json().page.limit).toBe(100);
    expect((await search({ limit: 0 })).json()).toEqual({ items: [], page: { limit: 0, offset: 0, total: 3 } });
  });

  it("narrows to a workspace subtree; 404 for another org's, 403 for an unreadable one", async () => {
    expect(ids(await search({ workspace_id: 'ws-a-team' })).sort()).toEqual(['ag-1', 'ag-2']);
    expectProblem(await search({ workspace_id: 'ws-b' }), 404, 'not_found');
    expectProblem(await search({ workspace_id: 'ws-a-other' }, 'u-viewer'), 403, 'access_denied');
    expectProblem(await search({ workspace_id: 'nope' }), 404, 'not_found');
  });

  it('masks identities: the API key never leaves the service', async () => {
    const res = await search({});
    expect(res.body).not.toContain('agk_testkey');
    const ag2 = res.json().items.find((i: { id: string }) => i.id === 'ag-2');
    expect(ag2.identity).toMatchObject({ credential_kind: 'api_key' });
    expect(ag2.identity.api_key).toMatch(/^\*{4}.{4}$/);
    const ag1 = res.json().items.find((i: { id: string }) => i.id === 'ag-1');
    expect(ag1.identity).toMatchObject({ client_id: 'client-ag-1', credential_kind: 'oidc_client' });
    expect(ag1.identity).not.toHaveProperty('api_key');
  });

  it('shows relationships with their direction and readable endpoints', async () => {
    const ag1 = (await search({ query: 'invoice parser', strategy: 'exact' })).json().items[0];
    const { count, incoming, outgoing } = ag1.relationships as {
      count: number;
      incoming: unknown[];
      outgoing: unknown[];
    };
    expect(count).toBe(incoming.length + outgoing.length);
    const out = ag1.relationships.outgoing.map((r: { rel_type: string; to: { id: string }; direction: string }) => [
      r.rel_type,
      r.to.id,
      r.direction,
    ]);
    expect(out).toEqual(
      expect.arrayContaining([
        ['uses_tool', 'tl-1', 'outgoing'],
        ['uses_skill', 'sk-1', 'outgoing'],
      ]),
    );
  });

  it('rejects bad input with the precedence of DESIGN §7', async () => {
    const h = { ...(await t.auth('u-admin')), 'content-type': 'application/json' };
    const post = (payload: string, headers: Record<string, string> = h) =>
      t.app.inject({ method: 'POST', url: '/agent/v1/agents/search', headers, payload });
    expectProblem(await post('{}', { ...h, 'content-type': 'text/plain' }), 415, 'unsupported_content_type');
    expectProblem(await post('{"query": "x"', h), 400, 'invalid_json');
    expectProblem(await post('"just a string"', h), 400, 'invalid_request');
    expectProblem(await post('null', h), 400, 'invalid_request');
    expect(expectProblem(await search({ limit: 'ten' }), 422, 'invalid_field').field).toBe('/limit');
    expect(expectProblem(await search({ strategy: 'fuzzy' }), 422, 'invalid_field').field).toBe('/strategy');
    expect(expectProblem(await search({ sorts: ['colour'] }), 422, 'invalid_field').field).toBe('/sorts/0');
    expect(expectProblem(await search({ surprise: 1 }), 422, 'invalid_field').field).toBe('/surprise');
    const many = expectProblem(await search({ limit: -1, offset: 'x' }), 422, 'validation_failed');
    expect(many.errors).toHaveLength(2);
    const both = expectProblem(await search({ offset: 1, cursor: 'abc' }), 422, 'validation_failed');
    expect(both.errors[0].field).toBe('/cursor');
    expect(expectProblem(await search({ cursor: 'not-a-cursor' }), 422, 'invalid_field').field).toBe('/cursor');
  });
});

describe('GET /agent/v1/agents/:id/profile-image (operation 8)', () => {
  async function image(id: string, user = 'u-admin', accept?: string) {
    const headers: Record<string, string> = { ...(await t.auth(user)) };
    if (accept) headers.accept = accept;
    return t.app.inject({ method: 'GET', url: `/agent/v1/agents/${id}/profile-image`, headers });
  }

  it('returns the stored image as a JSON array of bytes, or raw with Accept: image/*', async () => {
    const json = await image('ag-1');
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    const bytes = json.json<number[]>();
    expect(Array.isArray(bytes)).toBe(true);
    expect(bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)).toBe(true);
    expect(bytes.slice(0, 8)).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
    const raw = await image('ag-1', 'u-admin', 'image/*');
    expect(raw.headers['content-type']).toBe('image/png');
    expect([...raw.rawPayload]).toEqual(bytes);
  });

  it('generates a deterministic PNG for an agent without one', async () => {
    const a = (await image('ag-3')).json<number[]>();
    const b = (await image('ag-3')).json<number[]>();
    expect(a.slice(0, 8)).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
    expect(a).toEqual(b);
    expect(a).not.toEqual((await image('ag-2')).json());
  });

  it('404 for unknown, non-agent and other-org ids; 403 for a discoverable unreadable agent', async () => {
    expectProblem(await image('nope'), 404, 'not_found');
    expectProblem(await image('tl-1'), 404, 'not_found');
    expectProblem(await image('ag-b1'), 404, 'not_found');
    expectProblem(await image('ag-3', 'u-viewer'), 403, 'access_denied');
  });

  it('rejects unknown query parameters with 400 invalid_query', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/agent/v1/agents/ag-1/profile-image?size=big',
      headers: await t.auth('u-admin'),
    });
    expectProblem(res, 400, 'invalid_query');
  });
});
