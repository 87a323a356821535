import Ajv2020 from 'ajv/dist/2020.js';
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

async function get(url: string, user = 'u-admin', org = 'org-a') {
  return t.app.inject({ method: 'GET', url, headers: await t.auth(user, org) });
}

describe('GET /registry/v1/workspaces/:id/export (operation 5)', () => {
  it('exports the workspace, its descendants, their projects and latest artifacts', async () => {
    const res = await get('/registry/v1/workspaces/ws-a-team/export');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.workspaces.map((w: { id: string }) => w.id).sort()).toEqual(['ws-a-sub', 'ws-a-team']);
    const team = body.workspaces.find((w: { id: string }) => w.id === 'ws-a-team');
    expect(team).toMatchObject({
      name: expect.any(String),
      display_name: expect.any(String),
      kind: expect.any(String),
      workspace_status: 'active',
      root_workspace_id: 'ws-a',
      parent_id: 'ws-a',
      parent: { id: 'ws-a' },
      root_workspace: { id: 'ws-a' },
      effective_role: 'admin',
      member_count: expect.any(Number),
    });
    expect(team.permissions).toEqual({
      can_create_content: true,
      can_delete: true,
      can_discover: true,
      can_join: false,
      can_leave: false,
      can_manage_members: true,
      can_read: true,
      can_update: true,
    });
    expect(team).not.toHaveProperty('org_id');
    expect(body.projects.map((p: { id: string }) => p.id)).toEqual(['proj-a1']);
    expect(body.projects[0]).toMatchObject({
      workspace_id: 'ws-a-team',
      root_workspace_id: 'ws-a',
      workspace: { id: 'ws-a-team' },
    });

    const artifactIds = body.artifacts.map((a: { id: string }) => a.id);
    expect(artifactIds).toEqual(expect.arrayContaining(['ag-1', 'ag-2', 'sk-1']));
    expect(artifactIds).not.toContain('ag-3');
    expect(artifactIds).not.toContain('ag-b1');
    expect(new Set(artifactIds).size).toBe(artifactIds.length);
    for (const a of body.artifacts) {
      expect(a.is_latest).toBe(true);
      expect(typeof a.display_name).toBe('string');
      expect(a.workspace).toMatchObject({ id: a.workspace_id });
      expect(Object.keys(a.permissions).sort()).toEqual([
        'can_add_relationship',
        'can_create_version',
        'can_delete',
        'can_edit',
        'can_link',
        'can_read',
        'can_remove_relationship',
        'can_unlink',
      ]);
    }
    const counted = body.workspaces.reduce((n: number, w: { artifact_count: number }) => n + w.artifact_count, 0);
    expect(counted).toBe(body.artifacts.length);
    expect(res.body).not.toContain('agk_testkey');
  });

  it('answers a viewer with read-only permissions', async () => {
    const body = (await get('/registry/v1/workspaces/ws-a-team/export', 'u-viewer')).json();
    const team = body.workspaces.find((w: { id: string }) => w.id === 'ws-a-team');
    expect(team.effective_role).toBe('viewer');
    expect(team.permissions).toMatchObject({
      can_read: true,
      can_update: false,
      can_create_content: false,
      can_leave: true,
    });
    for (const a of body.artifacts) expect(a.permissions).toMatchObject({ can_read: true, can_edit: false });
  });

  it('404 when not discoverable, 403 when discoverable but not readable', async () => {
    expectProblem(await get('/registry/v1/workspaces/ws-b/export'), 404, 'not_found');
    expectProblem(await get('/registry/v1/workspaces/missing/export'), 404, 'not_found');
    expectProblem(await get('/registry/v1/workspaces/ws-a/export', 'u-viewer'), 403, 'access_denied');
    expectProblem(await get('/registry/v1/workspaces/ws-a-team/export', 'u-none'), 403, 'access_denied');
  });
});

describe('GET /registry/v1/users (operation 7)', () => {
  it("lists the caller's org users by id with artifact counts", async () => {
    const res = await get('/registry/v1/users');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const ids = body.items.map((u: { id: string }) => u.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(['u-admin', 'u-viewer', 'u-none', 'u-susp']));
    expect(ids).not.toContain('u-b');
    expect(body.page).toMatchObject({ limit: 50, offset: 0, total: ids.length });
    expect(body.page).not.toHaveProperty('next_cursor');
    for (const u of body.items) {
      expect(typeof u.created_at).toBe('string');
      expect(typeof u.updated_at).toBe('string');
      expect(u.artifact_count).toBe(
        Object.values(u.artifact_count_by_kind as Record<string, number>).reduce((a, b) => a + b, 0),
      );
      expect(u).not.toHaveProperty('org_id');
      expect(u).not.toHaveProperty('status');
    }
  });

  it('walks the list by next_cursor to the end', async () => {
    const all = (await get('/registry/v1/users')).json().items.map((u: { id: string }) => u.id);
    const seen: string[] = [];
    let url = '/registry/v1/users?limit=1';
    for (let i = 0; i < 20; i++) {
      const body = (await get(url)).json();
      seen.push(...body.items.map((u: { id: string }) => u.id));
      if (body.page.next_cursor === undefined) break;
      url = `/registry/v1/users?limit=1&cursor=${body.page.next_cursor}`;
    }
    expect(seen).toEqual(all);
  });

  it('rejects a foreign or mixed cursor and bad numbers with 400 invalid_query', async () => {
    const first = (await get('/registry/v1/users?limit=1')).json();
    expectProblem(await get(`/registry/v1/users?cursor=${first.page.next_cursor}&offset=1`), 400, 'invalid_query');
    expectProblem(await get('/registry/v1/users?cursor=garbage'), 400, 'invalid_query');
    expectProblem(
      await get(`/registry/v1/users?cursor=${first.page.next_cursor}`, 'u-b', 'org-b'),
      400,
      'invalid_query',
    );
    expectProblem(await get('/registry/v1/users?limit=x'), 400, 'invalid_query');
  });

  it('shows org B only its own users', async () => {
    const body = (await get('/registry/v1/users', 'u-b', 'org-b')).json();
    expect(body.items.map((u: { id: string }) => u.id)).toEqual(['u-b']);
  });
});

describe('GET /skill/v1/insights/schemas (operation 4)', () => {
  it('lists six JSON Schema 2020-12 documents, version 2, that compile', async () => {
    const res = await get('/skill/v1/insights/schemas');
    expect(res.statusCode).toBe(200);
    const { items } = res.json();
    expect(items.map((i: { name: string }) => i.name)).toEqual([
      'usage_summary',
      'tool_failure_hotspot',
      'latency_regression',
      'cost_spike',
      'token_efficiency',
      'evaluation_drop',
    ]);
    // Version 2: the subject is a skill or an agent (version 1 knew skills only).
    expect(items.map((i: { version: string }) => i.version)).toEqual(['2', '2', '2', '2', '2', '2']);
    const ajv = new Ajv2020.default({ strict: true });
    for (const item of items) {
      expect(item.schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(item.schema.$id).toBe(`urn:gateway:insights:${item.name}:2`);
      const validate = ajv.compile(item.schema);
      expect(validate({ kind: item.name })).toBe(false);
    }
    const usage = ajv.getSchema(items[0].schema.$id)!;
    const counts = { traces: 1, sessions: 1, active_users: 1, tokens: 10 };
    const window = { start_time_unix_seconds: 0, end_time_unix_seconds: 60 };
    expect(usage({ kind: 'usage_summary', skill_id: 'sk-1', window, ...counts })).toBe(true);
    expect(usage({ kind: 'usage_summary', agent_id: 'agent-1', window, ...counts })).toBe(true);
    // Exactly one subject.
    expect(usage({ kind: 'usage_summary', skill_id: 'sk-1', agent_id: 'agent-1', window, ...counts })).toBe(false);
    expect(usage({ kind: 'usage_summary', window, ...counts })).toBe(false);
    const drop = ajv.getSchema(items[5].schema.$id)!;
    const scores = { evaluation_name: 'relevance', current_score: 0.41, previous_score: 0.82, samples: 120 };
    expect(drop({ kind: 'evaluation_drop', agent_id: 'agent-1', window, ...scores, previous_samples: 900 })).toBe(true);
    expect(drop({ kind: 'evaluation_drop', agent_id: 'agent-1', window, ...scores, evaluation_name: '' })).toBe(false);
  });
});

describe('service routes and errors', () => {
  it('answers unknown routes with a problem body', async () => {
    expectProblem(await get('/agent/v1/nothing-here'), 404, 'not_found');
  });

  it('carries the trace id of traceparent into problem bodies', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/mcp/v1/tools',
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    expect(expectProblem(res, 401, 'token_missing').trace_id).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(res.headers.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
  });

  it('serves health, readiness and an OpenAPI 3.1 document of every REST route', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().checks.registry).toBe('ok');
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    for (const [path, method] of [
      ['/agent/v1/agents/search', 'post'],
      ['/mcp/v1/tools/aggregate', 'post'],
      ['/skill/v1/insights/schemas', 'get'],
      ['/registry/v1/workspaces/{workspace_id}/export', 'get'],
      ['/mcp/v1/tools', 'get'],
      ['/registry/v1/users', 'get'],
      ['/agent/v1/agents/{agent_id}/profile-image', 'get'],
    ] as const) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.responses['200']).toBeDefined();
      expect(op.responses['401'].content['application/problem+json']).toBeDefined();
    }
    expect(doc.components.schemas.Problem.required).toEqual(['code', 'title', 'detail', 'status']);
  });
});
