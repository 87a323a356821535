/**
 * Trace metrics of the tool aggregate (operation 3, DESIGN §8) and `Tool.usage(since:)`: calls,
 * error rate, p95 latency and last call from the tool_call spans whose tool name and MCP server are
 * a tool's, in the caller's scope. Expected values are computed here from the stored spans and the
 * bundle's tools, span by span, never read from the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { otlpBody, otlpSpan } from '../abuse/fixture.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { toolCallRow } from '../fixtures/span-row.ts';

const NOW = Math.floor(Date.now() / 1000);
const DAY = 86400;
let t: TestApp;

const bundle = smallBundle();
/** (tool name, server) of each tool of the bundle, by workspace. */
const TOOLS = bundle.artifacts
  .filter((a) => a.kind === 'tool')
  .map((a) => ({
    id: a.id,
    workspace: a.workspace_id,
    tool: (a as { tool_name?: string }).tool_name ?? a.name,
    server: (a as { server_id?: string }).server_id ?? null,
  }));

let n = 0;
function call(workspace: string, tool: string, mcp: string | null, extra: Partial<SpanRow> = {}): SpanRow {
  n++;
  return toolCallRow(n, tool, mcp, {
    workspace_id: workspace,
    start_s: NOW - (n % 40) * 3600,
    duration_ms: 5 + ((n * 53) % 400),
    is_error: n % 5 === 0,
    ...extra,
  });
}

const SPANS: SpanRow[] = [
  ...Array.from({ length: 40 }, () => call('ws-a-team', 'create_issue', 'srv-github')),
  ...Array.from({ length: 25 }, () => call('ws-a-sub', 'list_pulls', 'srv-github')),
  ...Array.from({ length: 15 }, () => call('ws-a-team', 'search_tickets', 'srv-jira')),
  // In ws-a-other: the viewer (ws-a-team subtree) must not count these.
  ...Array.from({ length: 12 }, () => call('ws-a-other', 'close_ticket', 'srv-jira')),
  ...Array.from({ length: 8 }, () => call('ws-a-other', 'create_issue', 'srv-github')),
  // Same tool name on another server, another kind of span, another organization, long ago.
  ...Array.from({ length: 6 }, () => call('ws-a-team', 'create_issue', 'srv-jira')),
  call('ws-a-team', 'create_issue', 'srv-github', { category: 'model_call' }),
  ...Array.from({ length: 9 }, () => call('ws-b', 'create_issue', 'srv-github', { org_id: 'org-b' })),
  ...Array.from({ length: 7 }, () => call('ws-a-team', 'create_issue', 'srv-github', { start_s: NOW - 90 * DAY })),
];

/** Spans the tests send through OTLP on the way (the expected values count them too). */
const INGESTED: SpanRow[] = [];

interface Metrics {
  calls: number;
  error_rate: number | null;
  p95_latency_ms: number | null;
  last_called_at: string | null;
}

/** DESIGN §8 by hand: the calls of the tools in `tools`, in `workspaces`, since `since`. */
function expected(tools: typeof TOOLS, workspaces: readonly string[], since: number | null): Metrics {
  const calls = [...SPANS, ...INGESTED].filter(
    (s) =>
      s.org_id === 'org-a' &&
      s.category === 'tool_call' &&
      workspaces.includes(s.workspace_id) &&
      (since === null || s.start_s >= since) &&
      tools.some((x) => x.tool === s.tool && x.server === s.mcp),
  );
  if (calls.length === 0) return { calls: 0, error_rate: null, p95_latency_ms: null, last_called_at: null };
  const sorted = calls.map((s) => s.duration_ms).sort((a, b) => a - b);
  return {
    calls: calls.length,
    error_rate: calls.filter((s) => s.is_error).length / calls.length,
    p95_latency_ms: sorted[Math.ceil(0.95 * sorted.length) - 1] as number,
    last_called_at: new Date(Math.max(...calls.map((s) => s.start_s)) * 1000).toISOString(),
  };
}

const ORG_A = ['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other'];
const VIEWER = ['ws-a-team', 'ws-a-sub'];
const TRACE_METRICS = ['calls', 'error_rate', 'p95_latency_ms', 'last_called_at'];

async function aggregate(body: object, user = 'u-admin') {
  return t.app.inject({
    method: 'POST',
    url: '/mcp/v1/tools/aggregate',
    headers: await t.auth(user),
    payload: body,
  });
}
type Groups = { key: Record<string, unknown>; metrics: Record<string, unknown> }[];
const groupsOf = (res: { json(): unknown }) => (res.json() as { groups: Groups }).groups;

beforeAll(async () => {
  t = await startTestApp({ bundle });
  await t.traces.insertSpans(SPANS);
});
afterAll(async () => {
  await t.close();
});

describe('operation 3: trace metrics of tool groups', () => {
  it('by server: calls, error rate, p95 latency and last call of the tools of each group', async () => {
    const res = await aggregate({ group_by: ['server_id'], metrics: ['count', ...TRACE_METRICS] });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-cache']).toBeUndefined();
    const byServer = Object.fromEntries(groupsOf(res).map((g) => [g.key.server_id, g.metrics]));
    for (const server of ['srv-github', 'srv-jira']) {
      const tools = TOOLS.filter((x) => x.server === server);
      expect(byServer[server], server).toEqual({ count: tools.length, ...expected(tools, ORG_A, null) });
    }
    expect((byServer['srv-github'] as Metrics).calls).toBe(40 + 25 + 8 + 7);
  });

  it('one group without group_by; a window; a workspace subtree', async () => {
    const all = await aggregate({ metrics: TRACE_METRICS, since_unix_seconds: NOW - 10 * DAY });
    expect(groupsOf(all)).toEqual([{ key: {}, metrics: expected(TOOLS, ORG_A, NOW - 10 * DAY) }]);
    const sub = await aggregate({ metrics: ['calls'], workspace_id: 'ws-a-sub', group_by: ['workspace_id'] });
    expect(groupsOf(sub)).toEqual([{ key: { workspace_id: 'ws-a-sub' }, metrics: { calls: 25 } }]);
  });

  it('a viewer counts only the calls in the workspaces it reads, of the tools it reads', async () => {
    const res = await aggregate({ group_by: ['server_id'], metrics: TRACE_METRICS }, 'u-viewer');
    const byServer = Object.fromEntries(groupsOf(res).map((g) => [g.key.server_id, g.metrics]));
    for (const server of ['srv-github', 'srv-jira']) {
      const tools = TOOLS.filter((x) => x.server === server && VIEWER.includes(x.workspace));
      expect(byServer[server], server).toEqual(expected(tools, VIEWER, null));
    }
    // close_ticket lives in ws-a-other: neither the tool nor its calls are the viewer's.
    expect((byServer['srv-jira'] as Metrics).calls).toBe(15);
  });

  it('a group whose tools were never called: 0 calls and nulls', async () => {
    const res = await aggregate({ group_by: ['workspace_id'], metrics: TRACE_METRICS, since_unix_seconds: NOW + DAY });
    expect(groupsOf(res).map((g) => g.metrics)).toEqual(
      groupsOf(res).map(() => ({ calls: 0, error_rate: null, p95_latency_ms: null, last_called_at: null })),
    );
  });

  it('the default metrics stay the registry ones; registry answers are cached, trace answers are not', async () => {
    const plain = await aggregate({});
    expect(Object.keys(groupsOf(plain)[0]?.metrics ?? {})).toEqual(['count', 'servers', 'latest_updated_at']);
    expect((await aggregate({})).headers['x-cache']).toBe('hit');
    const body = { metrics: ['calls'], group_by: ['server_id'], filters: { server_id: 'srv-jira' } };
    const before = groupsOf(await aggregate(body))[0]?.metrics.calls as number;
    const startS = NOW - 60;
    const sent = await t.app.inject({
      method: 'POST',
      url: '/v1/traces',
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
      payload: otlpBody(
        [
          otlpSpan(
            {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': 'search_tickets',
              'mcp.server.name': 'srv-jira',
            },
            startS,
          ),
        ],
        { 'workspace.id': 'ws-a-team' },
      ),
    });
    expect(sent.json()).toEqual({});
    INGESTED.push(
      call('ws-a-team', 'search_tickets', 'srv-jira', { start_s: startS, duration_ms: 250, is_error: false }),
    );
    const after = await aggregate(body);
    expect(after.headers['x-cache']).toBeUndefined();
    expect(groupsOf(after)[0]?.metrics.calls).toBe(before + 1);
  });

  it('bad input: 422 with the field, nothing asked of the stores', async () => {
    for (const since of [-1, 'yesterday', 1.5]) {
      const res = await aggregate({ metrics: ['calls'], since_unix_seconds: since });
      expect(expectProblem(res, 422, 'invalid_field').field).toBe('/since_unix_seconds');
    }
    expect(expectProblem(await aggregate({ metrics: ['calls', 'p99'] }), 422, 'invalid_field').field).toBe(
      '/metrics/1',
    );
  });

  it('503 traces_unavailable for trace metrics when the trace store is down; registry metrics keep working', async () => {
    const own = await startTestApp({ bundle });
    await own.traces.close();
    const ask = async (payload: object) =>
      own.app.inject({
        method: 'POST',
        url: '/mcp/v1/tools/aggregate',
        headers: await own.auth('u-admin'),
        payload,
      });
    expectProblem(await ask({ metrics: ['count', 'calls'] }), 503, 'traces_unavailable');
    const registryOnly = await ask({ metrics: ['count'] });
    expect(registryOnly.statusCode).toBe(200);
    expect(groupsOf(registryOnly)).toEqual([{ key: {}, metrics: { count: 4 } }]);
    const graph = await own.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: await own.auth('u-admin'),
      payload: { query: '{ tool(id: "tl-1") { id usage { calls } } }' },
    });
    expect(graph.json<{ errors: { extensions: { code: string } }[] }>().errors[0]?.extensions.code).toBe(
      'traces_unavailable',
    );
    await own.close();
  });
});

describe('bounded before work (DESIGN §12)', () => {
  it('an aggregate whose trace metrics would look up more than 10,000 distinct tools: 422 before the trace store', async () => {
    const big = smallBundle();
    const template = big.artifacts.find((a) => a.id === 'tl-1') as Record<string, unknown>;
    for (let i = 0; i < 10_001; i++)
      big.artifacts.push({ ...template, id: `tl-x${i}`, name: `t${i}`, tool_name: `t${i}` } as never);
    const own = await startTestApp({ bundle: big });
    let asked = 0;
    const original = own.traces.toolUsage.bind(own.traces);
    own.traces.toolUsage = (q, signal) => {
      asked++;
      return original(q, signal);
    };
    const ask = async (payload: object) =>
      own.app.inject({ method: 'POST', url: '/mcp/v1/tools/aggregate', headers: await own.auth('u-admin'), payload });
    const refused = await ask({ metrics: ['calls'], group_by: ['server_id'] });
    expect(expectProblem(refused, 422, 'invalid_field').field).toBe('/metrics');
    expect(asked).toBe(0);
    // Narrowed by a filter, the same aggregate answers.
    const narrowed = await ask({ metrics: ['calls'], group_by: ['server_id'], filters: { server_id: 'srv-jira' } });
    expect(groupsOf(narrowed)).toEqual([{ key: { server_id: 'srv-jira' }, metrics: { calls: 0 } }]);
    expect(asked).toBe(1);
    await own.close();
  });
});

describe('GraphQL Tool.usage(since:)', () => {
  const usageQuery = `query($since: Int) { tools(first: 50) { nodes { id usage(since: $since) { calls errorRate p95LatencyMs lastCalledAt } } } }`;
  async function usage(user: string, since: number | null) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: await t.auth(user),
      payload: { query: usageQuery, variables: { since } },
    });
    const body = res.json<{
      data: { tools: { nodes: { id: string; usage: Record<string, unknown> }[] } };
    }>();
    return Object.fromEntries(body.data.tools.nodes.map((x) => [x.id, x.usage]));
  }
  const shape = (m: Metrics) => ({
    calls: m.calls,
    errorRate: m.error_rate,
    p95LatencyMs: m.p95_latency_ms,
    lastCalledAt: m.last_called_at,
  });

  it('each tool its own calls, in the caller’s readable workspaces, batched into one trace query', async () => {
    const store = t.traces;
    const original = store.toolUsage.bind(store);
    let queries = 0;
    store.toolUsage = (q, signal) => {
      queries++;
      return original(q, signal);
    };
    try {
      for (const [user, reads] of [
        ['u-admin', ORG_A],
        ['u-viewer', VIEWER],
      ] as const) {
        for (const since of [null, NOW - 20 * 3600]) {
          queries = 0;
          const got = await usage(user, since);
          expect(queries, 'one trace query for the whole list').toBe(1);
          const visible = TOOLS.filter((x) => reads.includes(x.workspace));
          expect(Object.keys(got).sort()).toEqual(visible.map((x) => x.id).sort());
          for (const x of visible) expect(got[x.id], `${user} ${x.id}`).toEqual(shape(expected([x], reads, since)));
        }
      }
    } finally {
      store.toolUsage = original;
    }
  });
});
