/**
 * `Tool.usage(since:)` budgeted and batched (DESIGN §12): every lookup of an operation, whatever its
 * window, is one trace-store query; the distinct windows are priced in the per-operation trace-work
 * budget before anything executes, and spend the caller's 'tools.aggregate' quota on every path,
 * `_entities` included. The abusive operations (30 aliases with distinct windows; `_entities` with
 * 200 tools × 30 aliases) are here as sent. Expected values are computed from the stored spans.
 */
import type { RequestContext } from '../../src/context.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spendStatsWork, spendUsageWork, TRACE_WORK_BUDGET, usageWork } from '../../src/graphql/limits/trace-budget.ts';
import { MAX_USAGE_LOOKUPS } from '../../src/graphql/tool-usage-loader.ts';
import type { SpanRow, ToolUsageQuery } from '../../src/store/trace-port.ts';
import type { TraceStatsRequest } from '../../src/skills/stats-request.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { toolCallRow } from '../fixtures/span-row.ts';

const NOW = Math.floor(Date.now() / 1000);
const HOUR = 3600;
const DAY = 86400;
const EXTRA_TOOLS = 400;

/** The small bundle plus EXTRA_TOOLS tools t0… on srv-x in ws-a-team. */
function manyTools() {
  const bundle = smallBundle();
  const template = bundle.artifacts.find((a) => a.id === 'tl-1') as Record<string, unknown>;
  for (let i = 0; i < EXTRA_TOOLS; i++)
    bundle.artifacts.push({
      ...template,
      id: `tl-x${i}`,
      name: `t${i}`,
      tool_name: `t${i}`,
      server_id: 'srv-x',
    } as never);
  return bundle;
}

let n = 0;
function call(tool: string, mcp: string, startS: number, workspace = 'ws-a-team'): SpanRow {
  n++;
  return toolCallRow(n, tool, mcp, {
    workspace_id: workspace,
    trace_id: n.toString(16).padStart(32, 'c'),
    span_id: n.toString(16).padStart(16, 'c'),
    start_s: startS,
    duration_ms: 10 + ((n * 37) % 300),
    is_error: n % 6 === 0,
  });
}

/** Calls every 45 minutes over 40 hours for a few tools, so that hour-apart windows differ. */
const SPANS: SpanRow[] = [
  ...Array.from({ length: 54 }, (_, i) => call('t0', 'srv-x', NOW - 60 - i * 45 * 60)),
  ...Array.from({ length: 30 }, (_, i) => call('t1', 'srv-x', NOW - 60 - i * 80 * 60)),
  ...Array.from({ length: 20 }, (_, i) => call('create_issue', 'srv-github', NOW - 60 - i * 2 * HOUR)),
  // Another workspace the admin reads, and the same tool long ago.
  ...Array.from({ length: 9 }, (_, i) => call('t0', 'srv-x', NOW - 120 - i * HOUR, 'ws-a-sub')),
  ...Array.from({ length: 5 }, () => call('t0', 'srv-x', NOW - 90 * DAY)),
];

interface Usage {
  calls: number;
  errorRate: number | null;
  p95LatencyMs: number | null;
  lastCalledAt: string | null;
}
/** DESIGN §8 by hand: the calls of one tool (name, server) since `since`, in the admin's workspaces. */
function expected(tool: string, server: string, since: number | null): Usage {
  const calls = SPANS.filter((s) => s.tool === tool && s.mcp === server && (since === null || s.start_s >= since));
  if (calls.length === 0) return { calls: 0, errorRate: null, p95LatencyMs: null, lastCalledAt: null };
  const sorted = calls.map((s) => s.duration_ms).sort((a, b) => a - b);
  return {
    calls: calls.length,
    errorRate: calls.filter((s) => s.is_error).length / calls.length,
    p95LatencyMs: sorted[Math.ceil(0.95 * sorted.length) - 1] as number,
    lastCalledAt: new Date(Math.max(...calls.map((s) => s.start_s)) * 1000).toISOString(),
  };
}

/** 30 windows an hour and a half apart: each priced at one week, 30 of them well within the budget. */
const HOURLY = Array.from({ length: 30 }, (_, i) => NOW - (i + 1) * 90 * 60);
/** 30 distinct windows that each reach back to every stored call. */
const ALL_TIME = Array.from({ length: 30 }, (_, i) => i + 1);

const usageFields = (windows: readonly number[]) =>
  windows.map((s, i) => `a${i}: usage(since: ${s}) { calls errorRate p95LatencyMs lastCalledAt }`).join(' ');
const overList = (windows: readonly number[]) => `{ tools(first: 200) { nodes { id ${usageFields(windows)} } } }`;
const overEntities = (windows: readonly number[]) =>
  `query($r: [_Any!]!) { _entities(representations: $r) { ... on Tool { id ${usageFields(windows)} } } }`;
const references = (count: number) => Array.from({ length: count }, (_, i) => ({ __typename: 'Tool', id: `tl-x${i}` }));

let t: TestApp;
/** The trace store's toolUsage queries since the last reset. */
let asked: ToolUsageQuery[] = [];

async function post(app: TestApp, payload: object, user = 'u-admin') {
  const res = await app.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await app.auth(user)), 'content-type': 'application/json' },
    payload,
  });
  return { status: res.statusCode, body: res.json() };
}

/** Counts the toolUsage queries of `app`'s trace store. */
function countQueries(app: TestApp): void {
  const original = app.traces.toolUsage.bind(app.traces);
  app.traces.toolUsage = (q, signal) => {
    asked.push(q);
    return original(q, signal);
  };
}

beforeAll(async () => {
  t = await startTestApp({ bundle: manyTools(), env: { RATE_LIMIT_PER_MIN: '100000' } });
  await t.traces.insertSpans(SPANS);
  countQueries(t);
});
afterAll(async () => {
  await t.close();
});

describe('30 aliases of Tool.usage with distinct since', () => {
  it('answers each alias its own window in one trace-store query', async () => {
    asked = [];
    const res = await post(t, { query: overList(HOURLY) });
    expect(res.body.errors).toBeUndefined();
    expect(asked).toHaveLength(1);
    // One entry per (tool name, server, window): the page's 200 tools in 30 windows.
    expect(new Set(asked[0]?.tools.map((e) => e.sinceS))).toEqual(new Set(HOURLY));
    expect(asked[0]?.tools).toHaveLength(200 * 30);
    const nodes = res.body.data.tools.nodes as Record<string, unknown>[];
    expect(nodes).toHaveLength(200);
    const byId = new Map(nodes.map((x) => [x.id, x]));
    for (const [id, tool, server] of [
      ['tl-x0', 't0', 'srv-x'],
      ['tl-x1', 't1', 'srv-x'],
      ['tl-1', 'create_issue', 'srv-github'],
      ['tl-x100', 't100', 'srv-x'],
    ] as const)
      HOURLY.forEach((since, i) => {
        expect(byId.get(id)?.[`a${i}`], `${id} a${i}`).toEqual(expected(tool, server, since));
      });
    // The windows really differ: the oldest holds more calls of t0 than the newest.
    expect((byId.get('tl-x0')?.a29 as Usage).calls).toBeGreaterThan((byId.get('tl-x0')?.a0 as Usage).calls);
  });

  it('refuses 30 all-time windows before anything runs: 400, trace_work, no trace-store query', async () => {
    asked = [];
    const res = await post(t, { query: overList(ALL_TIME) });
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toEqual({
      code: 'GRAPHQL_VALIDATION_FAILED',
      http: { status: 400 },
      limit: 'trace_work',
      value: usageWork(ALL_TIME, NOW),
      max: TRACE_WORK_BUDGET,
    });
    expect(usageWork(ALL_TIME, NOW)).toBe(30 * 4 * 54);
    expect(asked).toHaveLength(0);
  });

  it('prices windows, not tools: the same windows on one tool or on 200 cost the same', async () => {
    asked = [];
    const one = await post(t, { query: `{ tool(id: "tl-x0") { ${usageFields(ALL_TIME.slice(0, 20))} } }` });
    const many = await post(t, { query: overList(ALL_TIME.slice(0, 20)) });
    // 20 all-time windows: 20 × 216 = 4,320, the whole budget, answered.
    expect(usageWork(ALL_TIME.slice(0, 20), NOW)).toBe(TRACE_WORK_BUDGET);
    expect(one.body.errors).toBeUndefined();
    expect(many.body.errors).toBeUndefined();
    expect(one.body.data.tool.a19).toEqual(expected('t0', 'srv-x', null));
    expect(asked).toHaveLength(2);
    const over = await post(t, { query: `{ tool(id: "tl-x0") { ${usageFields(ALL_TIME.slice(0, 21))} } }` });
    expect(over.body.errors[0].extensions).toMatchObject({ limit: 'trace_work', value: 21 * 216 });
    expect(asked).toHaveLength(2);
  });
});

describe('_entities with 200 tools × 30 aliases', () => {
  it('all-time windows: refused by the budget before any store work', async () => {
    asked = [];
    const res = await post(t, { query: overEntities(ALL_TIME), variables: { r: references(200) } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ limit: 'trace_work', max: TRACE_WORK_BUDGET });
    expect(asked).toHaveLength(0);
  });

  it('windows within the budget: answered, every tool every window, in one trace-store query', async () => {
    asked = [];
    const res = await post(t, { query: overEntities(HOURLY), variables: { r: references(200) } });
    expect(res.body.errors).toBeUndefined();
    expect(asked).toHaveLength(1);
    expect(asked[0]?.tools).toHaveLength(200 * 30);
    const entities = res.body.data._entities as Record<string, unknown>[];
    expect(entities.map((e) => e.id)).toEqual(references(200).map((r) => r.id));
    entities.forEach((e, k) => {
      HOURLY.forEach((since, i) => {
        expect(e[`a${i}`], `t${k} a${i}`).toEqual(expected(`t${k}`, 'srv-x', since));
      });
    });
  });

  it(`more than ${MAX_USAGE_LOOKUPS.toLocaleString('en-US')} (tool, since) lookups at once: OPERATION_TOO_LARGE, no trace-store query`, async () => {
    asked = [];
    const res = await post(t, { query: overEntities(HOURLY), variables: { r: references(340) } });
    expect(res.status).toBe(400);
    const codes = new Set(
      (res.body.errors as { extensions: { code: string; limit: string } }[]).map(
        (e) => `${e.extensions.code} ${e.extensions.limit}`,
      ),
    );
    expect(codes).toEqual(new Set(['OPERATION_TOO_LARGE usage_lookups']));
    expect(asked).toHaveLength(0);
  });
});

describe('one budget for every trace-store read of an operation', () => {
  it('statistics and usage spend from one budget per request context', () => {
    // Only what spendStatsWork reads of a request context: the cost limit.
    const operation = { services: { config: { bounds: { graphqlMaxCost: 25_000 } } } } as unknown as RequestContext;
    const year = {
      start_time_unix_seconds: NOW - 366 * DAY,
      end_time_unix_seconds: NOW,
      request_type: 'scalar',
      compare: 'previous_period',
      queries: Array.from({ length: 20 }, (_, k) => ({ name: `q${k}`, measure: 'spans' })),
    } as TraceStatsRequest;
    spendUsageWork(operation, ALL_TIME.slice(0, 10)); // 2,160
    spendStatsWork(operation, year); // 2,160: 4,320, the whole budget
    expect(() => {
      spendUsageWork(operation, [NOW - HOUR]);
    }).toThrow(expect.objectContaining({ extensions: expect.objectContaining({ limit: 'trace_work', value: 4328 }) }));
    expect(() => {
      spendUsageWork({}, [NOW - HOUR]);
    }).not.toThrow();
  });

  it('traceStats and Tool.usage together never run more than the budget', async () => {
    const year = {
      requestType: 'SCALAR',
      compare: 'PREVIOUS_PERIOD',
      startTimeUnixSeconds: NOW - 366 * DAY,
      endTimeUnixSeconds: NOW,
      queries: Array.from({ length: 20 }, (_, k) => ({
        name: `q${k}`,
        measure: 'SPANS',
        filters: [{ key: 'MODEL', op: 'NEQ', value: `m${k}` }],
      })),
    };
    const store = t.traces as unknown as { aggregate: (...args: unknown[]) => Promise<unknown> };
    const aggregate = store.aggregate.bind(store);
    let aggregations = 0;
    store.aggregate = (...args: unknown[]) => {
      aggregations++;
      return aggregate(...args);
    };
    asked = [];
    try {
      const res = await post(t, {
        query: `query($i: TraceStatsInput!) { skill(id: "sk-1") { a: traceStats(input: $i) { meta { warnings } } b: traceStats(input: $i) { meta { warnings } } } tool(id: "tl-x0") { usage(since: ${NOW - HOUR}) { calls } } }`,
        variables: { i: year },
      });
      // 2 × 2,160 + 8 > 4,320: whichever reads come last are refused, and what ran fits the budget.
      const refused = (res.body.errors as { extensions: { limit: string } }[]).filter(
        (e) => e.extensions.limit === 'trace_work',
      );
      expect(refused.length).toBeGreaterThan(0);
      const statsRan = aggregations / 40;
      expect(Number.isInteger(statsRan)).toBe(true);
      expect(statsRan * 2160 + asked.length * usageWork([NOW - HOUR], NOW)).toBeLessThanOrEqual(TRACE_WORK_BUDGET);
      expect(refused.length).toBe(2 - statsRan + 1 - asked.length);
    } finally {
      delete (store as { aggregate?: unknown }).aggregate;
    }
  });
});

describe("rate limits: Tool.usage spends 'tools.aggregate' on every path", () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ bundle: manyTools(), env: { RATE_LIMIT_PER_MIN: '40' } });
    countQueries(limited);
  });
  afterAll(async () => {
    await limited.close();
  });
  const aggregateOverRest = async () =>
    limited.app.inject({
      method: 'POST',
      url: '/mcp/v1/tools/aggregate',
      headers: await limited.auth('u-admin'),
      payload: { metrics: ['calls'] },
    });

  it('_entities: one call per distinct window; over the quota 429 rate_limited before the store, and REST shares it', async () => {
    asked = [];
    // _entities resolving tools spends nothing itself: four calls without usage leave the quota whole.
    for (let i = 0; i < 4; i++) {
      const plain = await post(limited, { query: overEntities([]), variables: { r: references(200) } });
      expect(plain.body.errors).toBeUndefined();
    }
    // 30 windows: 30 calls of the 40.
    const first = await post(limited, { query: overEntities(HOURLY), variables: { r: references(5) } });
    expect(first.body.errors).toBeUndefined();
    expect(asked).toHaveLength(1);
    const rest = await aggregateOverRest();
    expect(rest.statusCode).toBe(200);
    expect(rest.headers.ratelimit).toMatch(/r=9;/);
    const queried = asked.length;
    // Another 30 windows: over the quota, refused before the store.
    const second = await post(limited, { query: overEntities(HOURLY), variables: { r: references(5) } });
    // Each usage field fails with the catalogue's 429 (the entities stay null: a partial answer, HTTP 200).
    expect(second.body.data._entities).toEqual([null, null, null, null, null]);
    const errors = second.body.errors as { path: unknown[]; extensions: unknown }[];
    expect(errors).toHaveLength(5);
    for (const e of errors) expect(e.extensions).toEqual({ code: 'rate_limited', http: { status: 429 } });
    expect(asked).toHaveLength(queried);
    const after = await aggregateOverRest();
    expect(after.statusCode).toBe(429);
    expect(after.json().code).toBe('rate_limited');
  });
});
