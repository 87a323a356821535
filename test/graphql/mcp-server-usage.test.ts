/**
 * `McpServer.usage` over GraphQL: the tool calls naming the server over the last 30 days in the
 * caller's readable workspaces, whatever the tool (expected values computed from the stored
 * spans); every server of an operation level in one trace-store query; priced in the operation's
 * trace-work budget before execution and spent per batch; traces_unavailable when the trace
 * store is down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SERVER_USAGE_WORK,
  spendServerUsageWork,
  spendUsageWork,
  TRACE_WORK_BUDGET,
  usageWork,
} from '../../src/graphql/limits/trace-budget.ts';
import { GATEWAY_META } from '../../src/mcp-servers/present.ts';
import type { ServerUsageQuery, SpanRow } from '../../src/store/trace-port.ts';
import { toolCallRow } from '../fixtures/span-row.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { gql } from './helpers.ts';

const NOW = Math.floor(Date.now() / 1000);
const DAY = 86_400;

let n = 0;
function call(tool: string, mcp: string, startS: number, workspace = 'ws-a-team', org = 'org-a'): SpanRow {
  n++;
  return toolCallRow(n, tool, mcp, {
    org_id: org,
    workspace_id: workspace,
    start_s: startS,
    duration_ms: 10 + ((n * 37) % 300),
    is_error: n % 5 === 0,
  });
}

const SPANS: SpanRow[] = [
  // srv-github: two tools in ws-a-team, one in ws-a-other (which u-viewer cannot read), one call too old.
  ...Array.from({ length: 24 }, (_, i) => call('create_issue', 'srv-github', NOW - 3600 - i * DAY)),
  ...Array.from({ length: 7 }, (_, i) => call('a_tool_of_no_registry', 'srv-github', NOW - 60 - i * 3600)),
  ...Array.from({ length: 9 }, (_, i) => call('close_ticket', 'srv-github', NOW - 120 - i * 3600, 'ws-a-other')),
  call('create_issue', 'srv-github', NOW - 31 * DAY),
  // srv-jira: calls in ws-a-other only; the same server id in org-b does not count for org-a.
  ...Array.from({ length: 5 }, (_, i) => call('search_tickets', 'srv-jira', NOW - 600 - i * DAY, 'ws-a-other')),
  ...Array.from({ length: 4 }, (_, i) => call('x', 'srv-jira', NOW - 600 - i * DAY, 'ws-b', 'org-b')),
];

interface Usage {
  calls: number;
  errorRate: number | null;
  p95LatencyMs: number | null;
  windowDays: number;
}

/** The usage of `server` by hand: its calls of the last 30 days in these workspaces of org-a. */
function expected(server: string, workspaces: string[]): Usage {
  const calls = SPANS.filter(
    (s) =>
      s.org_id === 'org-a' && s.mcp === server && workspaces.includes(s.workspace_id) && s.start_s >= NOW - 30 * DAY,
  );
  if (calls.length === 0) return { calls: 0, errorRate: null, p95LatencyMs: null, windowDays: 30 };
  const sorted = calls.map((s) => s.duration_ms).sort((a, b) => a - b);
  return {
    calls: calls.length,
    errorRate: calls.filter((s) => s.is_error).length / calls.length,
    p95LatencyMs: sorted[Math.ceil(0.95 * sorted.length) - 1] as number,
    windowDays: 30,
  };
}

async function publish(app: TestApp, id: string, workspace: string, org = 'org-a') {
  await app.registry.publishMcpServer({
    id,
    org_id: org,
    workspace_id: workspace,
    server: { name: `io.github.${org}/${id}`, version: '1.0.0' },
    status: 'active',
    published_at: '2026-02-01T00:00:00Z',
    created_by: 'u-admin',
  });
}

let t: TestApp;
let asked: ServerUsageQuery[] = [];
beforeAll(async () => {
  t = await startTestApp();
  await publish(t, 'srv-github', 'ws-a-team');
  await publish(t, 'srv-jira', 'ws-a-other');
  await publish(t, 'srv-quiet', 'ws-a-sub');
  await publish(t, 'srv-jira', 'ws-b', 'org-b');
  await t.traces.insertSpans(SPANS);
  const original = t.traces.serverUsage.bind(t.traces);
  t.traces.serverUsage = (q, signal) => {
    asked.push(q);
    return original(q, signal);
  };
});
afterAll(async () => {
  await t.close();
});

const USAGE = 'usage { calls errorRate p95LatencyMs windowDays }';
const ADMIN = ['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other'];

describe('McpServer.usage', () => {
  it('counts the calls naming the server, whatever the tool, in the readable workspaces over 30 days', async () => {
    asked = [];
    const res = await gql(t, `{ mcpServers { nodes { id ${USAGE} } } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data.mcpServers.nodes).toEqual([
      { id: 'srv-github', usage: expected('srv-github', ADMIN) },
      { id: 'srv-jira', usage: expected('srv-jira', ADMIN) },
      { id: 'srv-quiet', usage: { calls: 0, errorRate: null, p95LatencyMs: null, windowDays: 30 } },
    ]);
    expect(expected('srv-github', ADMIN).calls).toBe(24 + 7 + 9);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ orgId: 'org-a', servers: ['srv-github', 'srv-jira', 'srv-quiet'] });
  });

  it('counts only the spans of the workspaces the caller can read', async () => {
    const res = await gql(t, `{ mcpServer(id: "srv-github") { ${USAGE} } }`, {}, 'u-viewer');
    expect(res.data.mcpServer.usage).toEqual(expected('srv-github', ['ws-a-team', 'ws-a-sub']));
    expect(res.data.mcpServer.usage.calls).toBe(24 + 7);
    const b = await gql(t, `{ mcpServer(id: "srv-jira") { ${USAGE} } }`, {}, 'u-b', 'org-b');
    expect(b.data.mcpServer.usage.calls).toBe(4);
  });

  it('equals what the MCP Registry API answers, documents and usage, for every caller', async () => {
    for (const [user, org] of [
      ['u-admin', 'org-a'],
      ['u-viewer', 'org-a'],
      ['u-b', 'org-b'],
    ] as const) {
      const graph = await gql(t, `{ mcpServers { nodes { id server ${USAGE} } } }`, {}, user, org);
      const res = await t.app.inject({
        method: 'GET',
        url: '/v0.1/servers?version=latest',
        headers: await t.auth(user, org),
      });
      expect(res.statusCode).toBe(200);
      const rest = res.json<{ servers: { server: unknown; _meta: Record<string, Record<string, unknown>> }[] }>();
      expect(graph.data.mcpServers.nodes, user).toEqual(
        rest.servers.map((s) => {
          const meta = s._meta[GATEWAY_META] as { server_id: string; usage: Record<string, unknown> };
          const u = meta.usage;
          return {
            id: meta.server_id,
            server: s.server,
            usage: {
              calls: u.calls,
              errorRate: u.error_rate,
              p95LatencyMs: u.p95_latency_ms,
              windowDays: u.window_days,
            },
          };
        }),
      );
    }
  });

  it('aliases, lists and _entities of one level are one trace-store query', async () => {
    asked = [];
    const r = ['srv-github', 'srv-jira'].map((id) => ({ __typename: 'McpServer', id }));
    const res = await gql(
      t,
      `query($r: [_Any!]!) { a: mcpServer(id: "srv-github") { ${USAGE} } b: mcpServer(id: "srv-jira") { ${USAGE} }
        _entities(representations: $r) { ... on McpServer { ${USAGE} } } }`,
      { r },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data._entities[1].usage).toEqual(expected('srv-jira', ADMIN));
    expect(asked).toHaveLength(1);
  });
});

describe('McpServer.usage in the trace-work budget', () => {
  const allTime = (count: number) =>
    Array.from({ length: count }, (_, i) => `a${i}: usage(since: ${i + 1}) { calls }`).join(' ');

  it('costs one 30-day window (24 units), once however many servers and levels ask', () => {
    expect(SERVER_USAGE_WORK).toBe(usageWork([NOW - 30 * DAY], NOW));
    expect(SERVER_USAGE_WORK).toBe(24);
  });

  it('priced before execution with the Tool.usage windows: past the budget, refused with no trace-store query', async () => {
    asked = [];
    // 20 all-time windows are the whole budget: with a server's usage beside them the operation is refused.
    const query = `{ tool(id: "tl-1") { ${allTime(20)} server { id } } mcpServers { nodes { ${USAGE} } } }`;
    const res = await gql(t, query);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions).toEqual({
      code: 'GRAPHQL_VALIDATION_FAILED',
      http: { status: 400 },
      limit: 'trace_work',
      value: TRACE_WORK_BUDGET + SERVER_USAGE_WORK,
      max: TRACE_WORK_BUDGET,
    });
    expect(asked).toHaveLength(0);
    const within = await gql(t, `{ tool(id: "tl-1") { ${allTime(19)} } mcpServers { nodes { ${USAGE} } } }`);
    expect(within.errors).toBeUndefined();
  });

  it('each batch spends its window at execution: servers asked at two levels spend two windows', async () => {
    // 19 all-time windows and one of 46 weeks and an hour (47 weeks begun) leave one server window
    // of the budget: 4,104 + 192 + 24.
    const since = NOW - 46 * 7 * DAY - 3600;
    expect(usageWork([...Array.from({ length: 19 }, (_, i) => i + 1), since], NOW) + SERVER_USAGE_WORK).toBe(
      TRACE_WORK_BUDGET,
    );
    const windows = `${allTime(19)} w: usage(since: ${since}) { calls }`;
    const once = await gql(t, `{ tool(id: "tl-1") { ${windows} } mcpServer(id: "srv-github") { ${USAGE} } }`);
    expect(once.errors).toBeUndefined();
    // The tool's server resolves after the tool: a second batch, past the budget at execution.
    const twice = await gql(
      t,
      `{ tool(id: "tl-3") { ${windows} server { ${USAGE} } } mcpServer(id: "srv-github") { ${USAGE} } }`,
    );
    expect(twice.errors?.map((e) => e.extensions)).toContainEqual(
      expect.objectContaining({ code: 'OPERATION_TOO_LARGE', limit: 'trace_work', max: TRACE_WORK_BUDGET }),
    );
  });

  it('a batch past what is left of the budget is refused', () => {
    const context = {};
    spendUsageWork(
      context,
      Array.from({ length: 19 }, (_, i) => i + 1),
    );
    for (let i = 0; i < 9; i++) spendServerUsageWork(context);
    expect(19 * 216 + 9 * 24).toBe(TRACE_WORK_BUDGET);
    expect(() => spendServerUsageWork(context)).toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ limit: 'trace_work' }) }),
    );
  });
});

describe('McpServer.usage when the trace store is down', () => {
  it('fails with traces_unavailable (503) while the server itself still answers', async () => {
    const own = await startTestApp();
    await publish(own, 'srv-github', 'ws-a-team');
    await own.traces.close();
    const res = await gql(own, `{ mcpServer(id: "srv-github") { id ${USAGE} } }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'traces_unavailable', http: { status: 503 } });
    expect(res.errors?.[0]?.path).toEqual(['mcpServer', 'usage']);
    const plain = await gql(own, '{ mcpServer(id: "srv-github") { id version } }');
    expect(plain.data.mcpServer).toEqual({ id: 'srv-github', version: '1.0.0' });
    await own.close();
  });
});
