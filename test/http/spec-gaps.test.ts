/**
 * Gaps the specification leaves, each as it reads: operations 2 and 3 take a
 * missing body as `{}`; every operation refuses query parameters it does not define.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('operations 2 and 3: a POST without a body is the empty object', () => {
  for (const url of ['/agent/v1/agents/search', '/mcp/v1/tools/aggregate']) {
    it(`${url}: no body, with or without content-type, answers as {}`, async () => {
      const auth = await t.auth('u-admin');
      const empty = await t.app.inject({
        method: 'POST',
        url,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(empty.statusCode).toBe(200);
      const bare = await t.app.inject({ method: 'POST', url, headers: auth });
      expect(bare.statusCode).toBe(200);
      expect(bare.json()).toEqual(empty.json());
      const typed = await t.app.inject({
        method: 'POST',
        url,
        headers: { ...auth, 'content-type': 'application/json' },
      });
      expect(typed.statusCode).toBe(200);
      expect(typed.json()).toEqual(empty.json());
    });
  }

  it('a body that is not an object is still 400 invalid_request, and the stats body is still required', async () => {
    const auth = await t.auth('u-admin');
    const headers = { ...auth, 'content-type': 'application/json' };
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/agent/v1/agents/search', headers, payload: '[]' }),
      400,
      'invalid_request',
    );
    expectProblem(
      await t.app.inject({ method: 'POST', url: '/skill/v1/skills/sk-1/traces/stats/query', headers: auth }),
      400,
      'invalid_request',
    );
  });
});

describe('unknown query parameters are 400 invalid_query on every operation', () => {
  const operations: [string, string, string?][] = [
    ['POST', '/skill/v1/skills/sk-1/traces/stats/query', '{}'],
    ['POST', '/agent/v1/agents/search', '{}'],
    ['POST', '/mcp/v1/tools/aggregate', '{}'],
    ['GET', '/skill/v1/insights/schemas'],
    ['GET', '/registry/v1/workspaces/ws-a-team/export'],
    ['GET', '/mcp/v1/tools'],
    ['GET', '/registry/v1/users'],
    ['GET', '/agent/v1/agents/ag-1/profile-image'],
  ];
  for (const [method, url, payload] of operations) {
    it(`${method} ${url}?foo=1`, async () => {
      const headers = { ...(await t.auth('u-admin')), 'content-type': 'application/json' };
      const res = await t.app.inject({
        method: method as 'GET' | 'POST',
        url: `${url}?foo=1`,
        headers,
        ...(payload !== undefined ? { payload } : {}),
      });
      expect(expectProblem(res, 400, 'invalid_query').detail).toContain('foo');
    });
  }
});

describe('stats order.by must rank by something the answer has', () => {
  const END = Date.UTC(2026, 9, 1) / 1000;
  async function stats(body: object) {
    return t.app.inject({
      method: 'POST',
      url: '/skill/v1/skills/sk-1/traces/stats/query',
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
      payload: { start_time_unix_seconds: END - 7 * 86400, end_time_unix_seconds: END, ...body },
    });
  }
  const field = (res: Awaited<ReturnType<typeof stats>>) =>
    (expectProblem(res, 422, 'validation_failed').errors as { field: string }[]).map((e) => e.field);

  it('a table ordered by a measure no query computes is 422 at /queries/0/order/by', async () => {
    const res = await stats({
      request_type: 'table',
      queries: [
        { name: 'calls', measure: 'tool_calls', group_by: ['tool'], order: { by: 'tokens', direction: 'desc' } },
      ],
    });
    expect(field(res)).toEqual(['/queries/0/order/by']);
  });

  it('a table may order by a measure another query computes, a query name or a group_by dimension', async () => {
    for (const by of ['tokens', 'tok', 'tool']) {
      const res = await stats({
        request_type: 'table',
        queries: [
          { name: 'calls', measure: 'tool_calls', group_by: ['tool'], order: { by, direction: 'asc' } },
          { name: 'tok', measure: 'tokens', group_by: ['tool'] },
        ],
      });
      expect(res.statusCode, by).toBe(200);
    }
  });

  it('a time series is ordered by its own values only', async () => {
    const bad = await stats({
      request_type: 'time_series',
      queries: [{ name: 's', measure: 'spans', group_by: ['model'], order: { by: 'tokens', direction: 'desc' } }],
    });
    expect(field(bad)).toEqual(['/queries/0/order/by']);
    const good = await stats({
      request_type: 'time_series',
      queries: [{ name: 's', measure: 'spans', group_by: ['model'], order: { by: 'spans', direction: 'asc' } }],
    });
    expect(good.statusCode).toBe(200);
  });
});

describe('users next_cursor keeps the page size it was issued with', () => {
  it('limit=2, then next_cursor alone: pages of 2 to the end; an explicit limit still wins', async () => {
    const headers = await t.auth('u-admin');
    interface UserPage {
      items: { id: string }[];
      page: { limit: number; offset: number; total: number; next_cursor?: string };
    }
    const get = async (qs: string) =>
      (await t.app.inject({ method: 'GET', url: `/registry/v1/users?${qs}`, headers })).json<UserPage>();
    const first = await get('limit=2');
    expect(first.page.total).toBeGreaterThan(2);
    const second = await get(`cursor=${first.page.next_cursor ?? ''}`);
    expect(second.page).toMatchObject({ limit: 2, offset: 2 });
    expect(second.items.length).toBe(Math.min(2, first.page.total - 2));
    const widened = await get(`cursor=${first.page.next_cursor ?? ''}&limit=50`);
    expect(widened.page).toMatchObject({ limit: 50, offset: 2 });
    expect(widened.items.map((u) => u.id).slice(0, second.items.length)).toEqual(second.items.map((u) => u.id));
  });
});

describe('profile image: negotiation and cached headers', () => {
  async function image(accept?: string) {
    const headers: Record<string, string> = await t.auth('u-admin');
    if (accept !== undefined) headers.accept = accept;
    return t.app.inject({ method: 'GET', url: '/agent/v1/agents/ag-1/profile-image', headers });
  }
  const kind = (res: Awaited<ReturnType<typeof image>>) => String(res.headers['content-type']).split(';')[0];

  it('honours q-values; equal preference and unknown types get the JSON default', async () => {
    expect(kind(await image('image/png;q=1, application/json;q=0'))).toBe('image/png');
    expect(kind(await image('application/json;q=0.5, image/*;q=0.9'))).toBe('image/png');
    expect(kind(await image('image/*;q=0.4, application/json'))).toBe('application/json');
    expect(kind(await image('image/*, application/json'))).toBe('application/json');
    expect(kind(await image('text/html'))).toBe('application/json');
    expect(kind(await image('*/*'))).toBe('application/json');
    expect(kind(await image('image/*;q=0'))).toBe('application/json');
    expect(kind(await image())).toBe('application/json');
  });

  it('a cache hit keeps the headers of the miss (Vary: accept)', async () => {
    for (const accept of ['image/png', 'application/json']) {
      const miss = await image(accept);
      const hit = await image(accept);
      expect(hit.headers['x-cache']).toBe('hit');
      expect(hit.headers.vary).toBe('accept');
      expect(hit.headers.vary).toBe(miss.headers.vary);
      expect(hit.headers['content-type']).toBe(miss.headers['content-type']);
      expect(hit.rawPayload.equals(miss.rawPayload)).toBe(true);
    }
  });
});
