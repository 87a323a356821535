/**
 * Protections that a one-line change used to break without a failing test, each
 * pinned here with a fixture that crosses the boundary it guards: a relationship into a workspace the
 * viewer cannot read, spans in such a workspace, a user who reads one workspace and writes another,
 * a service account, a suspended organization and a revoked API key.
 */
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { demoSpans } from '../../src/seed/demo-traces.ts';
import { encodeExportRequest } from '../../src/otlp/traces/decode.ts';
import { otlpBody, otlpSpan } from '../abuse/fixture.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { TEST_API_KEY, addSuspendedOrg, smallBundle } from '../fixtures/small-bundle.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const REVOKED_KEY = 'agk_revoked000000000000000000000000';
const END = Date.UTC(2026, 9, 1) / 1000;
const T0 = '2026-01-01T00:00:00Z';
let t: TestApp;

function bundle() {
  const b = smallBundle();
  // ag-1 (ws-a-team, readable by u-viewer) uses tl-4 (ws-a-other, not readable by u-viewer).
  b.relationships.push({
    from: { id: 'ag-1', kind: 'agent' },
    to: { id: 'tl-4', kind: 'tool' },
    rel_type: 'uses_tool',
    provenance: 'declared',
    relationship_status: 'active',
  });
  // u-viewer reads ws-a-team (viewer) and writes only ws-a-sub (editor).
  b.memberships.push({ workspace_id: 'ws-a-sub', user_id: 'u-viewer', role: 'editor' });
  // A suspended organization with an active admin.
  addSuspendedOrg(b);
  b.users.push({ id: 'u-s', org_id: 'org-s', status: 'active', created_at: T0, updated_at: T0 });
  b.memberships.push({ workspace_id: 'ws-s', user_id: 'u-s', role: 'admin' });
  // ag-3 gets a revoked API key.
  const ag3 = b.artifacts.find((a) => a.id === 'ag-3') as Record<string, unknown>;
  ag3.identity = { client_id: 'key-ag-3', credential_kind: 'api_key', api_key: REVOKED_KEY, revoked: true };
  // tl-4 (ws-a-other) belongs to proj-a1 of ws-a-team; u-admin created a tool in org-b.
  const tl4 = b.artifacts.find((a) => a.id === 'tl-4') as Record<string, unknown>;
  tl4.project_id = 'proj-a1';
  const tlb1 = b.artifacts.find((a) => a.id === 'tl-b1') as Record<string, unknown>;
  b.artifacts.push({ ...tlb1, id: 'tl-b2', name: 'read_mail', created_by: 'u-admin' } as (typeof b.artifacts)[number]);
  // ag-b1 gets an OpenID client identity that expired.
  const agb1 = b.artifacts.find((a) => a.id === 'ag-b1') as Record<string, unknown>;
  agb1.identity = { client_id: 'client-expired', credential_kind: 'oidc_client', expires_at: '2020-01-01T00:00:00Z' };
  return b;
}

beforeAll(async () => {
  t = await startTestApp({ bundle: bundle() });
  const spans: SpanRow[] = [];
  for (const [workspaceId, seed] of [
    ['ws-a-team', 1],
    ['ws-a-other', 2],
  ] as const) {
    for (const b of demoSpans({
      orgId: 'org-a',
      skills: [{ id: 'sk-1', workspaceId }],
      users: ['u-admin'],
      spans: 400,
      endS: END,
      days: 5,
      seed,
    }))
      spans.push(...b);
  }
  await t.traces.insertSpans(spans);
});
afterAll(async () => {
  await t.close();
});

async function spansOf(user: string, extra: object = {}): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    headers: await t.auth(user),
    payload: {
      start_time_unix_seconds: END - 10 * 86400,
      end_time_unix_seconds: END,
      request_type: 'scalar',
      queries: [{ name: 'n', measure: 'spans' }],
      ...extra,
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: { results: { value: number }[] } }>().data.results[0]?.value ?? -1;
}

describe('authorization pins', () => {
  it('trace statistics count only the spans of workspaces the caller can read', async () => {
    const all = await spansOf('u-admin');
    const team = await spansOf('u-admin', { workspace_id: 'ws-a-team' });
    expect(team).toBeGreaterThan(0);
    expect(all).toBeGreaterThan(team);
    expect(await spansOf('u-viewer')).toBe(team);
  });

  it('relationships into an unreadable workspace are hidden, over REST and GraphQL', async () => {
    const count = async (user: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/agent/v1/agents/search',
        headers: await t.auth(user),
        payload: { query: 'Invoice Parser', strategy: 'exact' },
      });
      const agent = res
        .json<{ items: { id: string; relationships: { count: number; outgoing: { to: { id: string } }[] } }[] }>()
        .items.find((a) => a.id === 'ag-1');
      return agent?.relationships.outgoing.map((r) => r.to.id).sort();
    };
    expect(await count('u-admin')).toEqual(['sk-1', 'tl-1', 'tl-4']);
    expect(await count('u-viewer')).toEqual(['sk-1', 'tl-1']);
    const graph = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: await t.auth('u-viewer'),
      payload: { query: '{ agent(id: "ag-1") { relationships { count outgoing { to { id } } } usedTools { id } } }' },
    });
    const agent = graph.json<{
      data: {
        agent: { relationships: { count: number; outgoing: { to: { id: string } }[] }; usedTools: { id: string }[] };
      };
    }>().data.agent;
    expect(agent.relationships.outgoing.map((r) => r.to.id).sort()).toEqual(['sk-1', 'tl-1']);
    expect(agent.relationships.count).toBe(2);
    expect(agent.usedTools.map((x) => x.id)).toEqual(['tl-1']);
  });

  it('artifact counts of users and projects hold only what the caller can read (they once counted every workspace)', async () => {
    const graph = async (query: string) =>
      (
        await t.app.inject({ method: 'POST', url: '/graphql', headers: await t.auth('u-viewer'), payload: { query } })
      ).json<{ data: Record<string, Record<string, unknown>> }>().data;
    // u-admin created artifacts in ws-a-other and in org-b (tl-b2 below), neither readable by u-viewer.
    const everywhere = (await t.registry.countArtifacts('creator', ['u-admin'])).get('u-admin') ?? {};
    const readable = (await graph('{ user(id: "u-admin") { artifactCount artifacts(first: 200) { totalCount } } }'))
      .user as { artifactCount: number; artifacts: { totalCount: number } };
    expect(readable.artifactCount).toBe(readable.artifacts.totalCount);
    expect(readable.artifactCount).toBeLessThan(Object.values(everywhere).reduce((a, b) => a + b, 0));
    const users = await t.app.inject({ method: 'GET', url: '/registry/v1/users', headers: await t.auth('u-viewer') });
    const admin = users
      .json<{ items: { id: string; artifact_count?: number }[] }>()
      .items.find((u) => u.id === 'u-admin');
    expect(admin?.artifact_count).toBe(readable.artifactCount);
    // proj-a1 (ws-a-team) also holds tl-4 of ws-a-other: u-viewer counts ag-1 only.
    const project = (await graph('{ project(id: "proj-a1") { artifactCount artifactCountByKind { tool } } }'))
      .project as { artifactCount: number; artifactCountByKind: { tool: number } };
    expect(project).toEqual({ artifactCount: 1, artifactCountByKind: { tool: 0 } });
    const exported = await t.app.inject({
      method: 'GET',
      url: '/registry/v1/workspaces/ws-a-team/export',
      headers: await t.auth('u-viewer'),
    });
    const proj = exported
      .json<{ projects: { id: string; artifact_count?: number }[] }>()
      .projects.find((p) => p.id === 'proj-a1');
    expect(proj?.artifact_count).toBe(1);
  });

  it('a service account reads and writes only its own workspace subtree', async () => {
    const key = { authorization: `Bearer ${TEST_API_KEY}` }; // ag-2 of ws-a-sub
    const tools = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: key });
    const admin = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await t.auth('u-admin') });
    const seen = tools.json<{ items: { workspace_id: string }[] }>().items.map((i) => i.workspace_id);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set(['ws-a-sub']));
    expect(admin.json<{ items: { workspace_id: string }[] }>().items.some((i) => i.workspace_id !== 'ws-a-sub')).toBe(
      true,
    );
    const send = (workspace: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...key, 'content-type': 'application/json' },
        payload: otlpBody([otlpSpan({ 'gen_ai.operation.name': 'chat' })], { 'workspace.id': workspace }),
      });
    expect((await send('ws-a-sub')).json()).toEqual({});
    expect(
      (await send('ws-a')).json<{ partialSuccess: { rejectedSpans: number } }>().partialSuccess.rejectedSpans,
    ).toBe(1);
  });

  it('ingestion needs write access to the target workspace, not read access', async () => {
    const send = async (workspace: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...(await t.auth('u-viewer')), 'content-type': 'application/json' },
        payload: otlpBody([otlpSpan({ 'gen_ai.operation.name': 'chat' })], { 'workspace.id': workspace }),
      });
    expect((await send('ws-a-sub')).json()).toEqual({});
    const readOnly = await send('ws-a-team');
    expect(
      readOnly.json<{ partialSuccess: { rejectedSpans: number; errorMessage: string } }>().partialSuccess,
    ).toMatchObject({
      rejectedSpans: 1,
      errorMessage: expect.stringContaining('no permission to write') as unknown,
    });
  });

  it('a suspended organization is refused even for an active user; a revoked API key is invalid', async () => {
    expectProblem(
      await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await t.auth('u-s', 'org-s') }),
      403,
      'account_suspended',
    );
    expectProblem(
      await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: { authorization: `Bearer ${REVOKED_KEY}` } }),
      401,
      'invalid_api_key',
    );
  });

  it('a client-credentials token of a revoked or expired identity binds to no agent (it once acted as the agent)', async () => {
    const issuer = await loadDevIssuer(t.dataDir);
    const asClient = async (client: string) => ({
      authorization: `Bearer ${await issuer.mint({ sub: client, claims: { client_id: client } })}`,
    });
    const ok = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await asClient('client-ag-1') });
    expect(ok.statusCode).toBe(200);
    for (const client of ['key-ag-3', 'client-expired'])
      expectProblem(
        await t.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await asClient(client) }),
        401,
        'token_service_account_unbound',
      );
  });
});

describe('OTLP protobuf answers, decoded by the OpenTelemetry exporter', () => {
  it('a partially rejected protobuf request answers partialSuccess with the count and the reason', async () => {
    const span = (id: number, attributes: object[]) => ({
      traceId: Buffer.alloc(16, id),
      spanId: Buffer.alloc(8, id),
      name: 'chat',
      startTimeUnixNano: String(BigInt(END - 3600) * 1_000_000_000n),
      endTimeUnixNano: String(BigInt(END - 3599) * 1_000_000_000n),
      attributes,
    });
    const body = encodeExportRequest(
      otlpTraceBody({
        resource: attrs({ 'workspace.id': 'ws-a-team' }),
        spans: [span(1, attrs({ 'gen_ai.operation.name': 'chat' })), span(2, attrs({ 'skill.id': 'sk-nope' }))],
      }),
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/traces',
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/x-protobuf' },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-protobuf/);
    const answer = ProtobufTraceSerializer.deserializeResponse(new Uint8Array(res.rawPayload));
    expect(Number(answer.partialSuccess?.rejectedSpans)).toBe(1);
    expect(answer.partialSuccess?.errorMessage).toContain('sk-nope');
  });
});
