/**
 * One MCP call, one tool call (src/store/call-pairs.ts), on every engine: hand-built client and
 * server spans of MCP calls arrive in every order, in one request or several, sealed in between or
 * not, some requests twice; after every step each path that counts tool calls (statistics summed
 * from rollups and read from rows, tool usage, server usage) equals a plain reference that applies
 * the rule to the spans stored so far:
 *
 * - the server's span a child of the client's (one trace): the server's counts, the client's not;
 * - the same MCP request (`mcp_request`, kinds CLIENT and SERVER) in two traces: the client's
 *   counts, with the server's duration and error; the server's not;
 * - only spans of one organization and workspace, of the same tool, pair.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AggregateQuery, SpanRow, ToolUsageQuery, TraceStore } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { serverUsageReference } from './server-usage-contract.ts';
import { expectSameRows, reference, toolUsageReference } from './trace-reference.ts';

/** A full UTC day inside the queries' range (PostgreSQL sums its sealed rows from the rollups). */
const DAY = Date.UTC(2026, 9, 10) / 1000;
const ORG = 'org-m';
const WS = 'ws-m';
const OTHER_WS = 'ws-m2';

let n = 0x7000;
const next = () => ++n;

/** A trace of skill sk-m: its invocation span (the mapping), at `at`. */
function traceOf(at: number, mapped = true): { id: string; root: SpanRow } {
  const k = next();
  const id = k.toString(16).padStart(32, 'a');
  return {
    id,
    root: spanRow(k, {
      org_id: ORG,
      workspace_id: WS,
      trace_id: id,
      start_s: at,
      duration_ms: 3000,
      category: mapped ? 'skill_invocation' : 'other',
      skill: mapped ? 'sk-m' : null,
    }),
  };
}

/** A tool call span of `tool` in `trace`, child of `parent`. */
function call(trace: { id: string }, parent: SpanRow | null, tool: string, fields: Partial<SpanRow> = {}): SpanRow {
  const k = next();
  return spanRow(k, {
    org_id: ORG,
    workspace_id: WS,
    trace_id: trace.id,
    parent_span_id: parent?.span_id ?? null,
    name: `tools/call ${tool}`,
    start_s: (parent?.start_s ?? DAY) + 1,
    duration_ms: 50 + (k % 97),
    category: 'tool_call',
    tool,
    mcp: 'srv-a',
    ...fields,
  });
}

const request = (session: string, id: number) => JSON.stringify([session, String(id)]);

type Step = SpanRow[] | 'seal';
interface Scenario {
  what: string;
  steps: Step[];
}

/** A propagated call at `at`: the trace's invocation, the client's span and the server's, its child. */
function propagated(at: number, tool = 'lookup', server: Partial<SpanRow> = {}) {
  const t = traceOf(at);
  const client = call(t, t.root, tool, { duration_ms: 400 });
  return { root: t.root, client, server: call(t, client, tool, { duration_ms: 120, ...server }) };
}

/** A call paired by its MCP request only: the client's span in a trace of the skill, the server's in its own. */
function byRequest(at: number, id: number, server: Partial<SpanRow> = {}) {
  const t = traceOf(at);
  const own = traceOf(at, false);
  const rq = { mcp_request: request('sess-1', id) };
  const client = call(t, t.root, 'lookup', { ...rq, mcp_side: 'client', duration_ms: 500 });
  return {
    root: t.root,
    client,
    server: call(own, null, 'lookup', { ...rq, mcp_side: 'server', duration_ms: 70, is_error: true, ...server }),
  };
}

function scenarios(): Scenario[] {
  const a = propagated(DAY + 600);
  const b = propagated(DAY + 1200, 'lookup', { is_error: true });
  const c = propagated(DAY + 1800, 'refund');
  const d = propagated(DAY + 2400);
  const e = propagated(DAY + 3000, 'refund', { is_error: true });
  const f = propagated(DAY - 3600); // in the partial day before the full one
  const g = byRequest(DAY + 4000, 1);
  const h = byRequest(DAY + 4600, 2, { is_error: false });
  const i = byRequest(DAY + 5200, 3);
  const both = propagated(DAY + 6000, 'lookup', { mcp_request: request('sess-2', 1), mcp_side: 'server' });
  const twice = propagated(DAY + 6600);
  const second = call({ id: twice.root.trace_id }, twice.client, 'lookup', { duration_ms: 30 });
  const other = propagated(DAY + 7200, 'lookup', { tool: 'refund', name: 'tools/call refund' });
  const elsewhere = propagated(DAY + 7800, 'lookup', { workspace_id: OTHER_WS });
  const session = byRequest(DAY + 8400, 4, { mcp_request: request('sess-3', 4) });
  const kindless = byRequest(DAY + 9000, 5, { mcp_side: null });
  const midnight = propagated(DAY + 86_400 - 60);
  midnight.client.duration_ms = 120_000;
  midnight.server.start_s = DAY + 86_400 + 30;
  const late = propagated(DAY + 3600);
  late.client.duration_ms = 1000;
  late.server.start_s = DAY + 86_400 + 7200;
  return [
    { what: 'propagated: client first, then server, separate requests', steps: [[a.root, a.client], [a.server]] },
    { what: 'propagated: server first, then client', steps: [[b.server], [b.root, b.client]] },
    { what: 'propagated: both in one request', steps: [[c.root, c.client, c.server]] },
    { what: 'propagated: client sealed before its server arrives', steps: [[d.root, d.client], 'seal', [d.server]] },
    { what: 'propagated: server sealed before its client arrives', steps: [[e.root, e.server], 'seal', [e.client]] },
    {
      what: 'propagated, every request twice, in a partial day',
      steps: [[f.root, f.client], [f.root, f.client], 'seal', [f.server], [f.server], [f.root, f.client]],
    },
    { what: 'MCP request: client first, then server', steps: [[g.root, g.client], [g.server]] },
    { what: 'MCP request: server sealed before its client arrives', steps: [[h.server], 'seal', [h.root, h.client]] },
    {
      what: 'MCP request: client sealed before its server, then both again',
      steps: [[i.root, i.client], 'seal', [i.server], [i.root, i.client, i.server]],
    },
    {
      what: 'propagated and the same MCP request at once: the server counts',
      steps: [[both.server], [both.root, { ...both.client, mcp_request: request('sess-2', 1), mcp_side: 'client' }]],
    },
    {
      what: 'two servers under one client: each counts, the client once not',
      steps: [[twice.root, twice.client, twice.server], 'seal', [second]],
    },
    { what: 'not a pair: the child is a call of another tool', steps: [[other.root, other.client], [other.server]] },
    {
      what: 'not a pair: the server span is in another workspace',
      steps: [[elsewhere.root, elsewhere.client], 'seal', [elsewhere.server]],
    },
    {
      what: 'not a pair: the same request id in another session',
      steps: [[session.root, session.client], [session.server]],
    },
    {
      what: 'not a pair: a request id without a span kind',
      steps: [[kindless.root, kindless.client], [kindless.server]],
    },
    {
      what: 'a pair across midnight: the server starts the next day, within the client span',
      steps: [[midnight.server], 'seal', [midnight.root, midnight.client]],
    },
    {
      what: 'not a pair: the server starts a day after the client span ended, past the clocks’ hour',
      steps: [[late.root, late.client], [late.server]],
    },
  ];
}

const identity = (s: SpanRow) => `${s.org_id}|${s.trace_id}|${s.span_id}|${s.start_s}`;

/** The rule by hand over the stored spans (one per identity): the spans as the statistics must count them. */
function counted(stored: readonly SpanRow[]): SpanRow[] {
  const calls = stored.filter((s) => s.category === 'tool_call' && s.tool !== null);
  const superseded = new Set<string>();
  const takes = new Map<string, SpanRow>();
  for (const server of calls)
    for (const client of calls) {
      const same = server.org_id === client.org_id && server.workspace_id === client.workspace_id;
      if (server === client || !same || server.tool !== client.tool) continue;
      const child = server.trace_id === client.trace_id && server.parent_span_id === client.span_id;
      // The server starts on a day the client's span, widened by an hour each side, touches.
      const day = (t: number) => Math.floor(t / 86_400);
      const during =
        day(server.start_s) >= day(client.start_s - 3600) &&
        day(server.start_s) <= day(client.start_s + client.duration_ms / 1000 + 3600);
      const sameRequest =
        server.mcp_request !== null &&
        server.mcp_request === client.mcp_request &&
        server.mcp_side === 'server' &&
        client.mcp_side === 'client';
      if ((!child && !sameRequest) || !during) continue;
      if (server.trace_id === client.trace_id) superseded.add(identity(client));
      else {
        superseded.add(identity(server));
        takes.set(identity(client), server);
      }
    }
  return stored.map((s) => {
    if (superseded.has(identity(s))) return { ...s, category: 'other' };
    const server = takes.get(identity(s));
    return server === undefined ? s : { ...s, duration_ms: server.duration_ms, is_error: server.is_error };
  });
}

const base: AggregateQuery = {
  orgId: ORG,
  subject: { skill: 'sk-m' },
  startS: DAY - 43_200,
  endS: DAY + 86_400 + 43_200,
  workspaceIds: [WS, OTHER_WS],
  filters: [],
  groupBy: [],
  measures: ['tool_calls', 'spans', 'traces', 'skill_invocations'],
};
const QUERIES: AggregateQuery[] = [
  base,
  { ...base, groupBy: ['tool'], measures: ['tool_calls', 'spans', 'traces'] },
  { ...base, groupBy: ['mcp'], bucket: 'day', measures: ['tool_calls'] },
  // A filter on another dimension than the group: read from rows on every engine.
  { ...base, groupBy: ['tool'], filters: [{ key: 'harness', op: 'eq', values: ['h'] }], measures: ['tool_calls'] },
];
const TOOLS: ToolUsageQuery = {
  orgId: ORG,
  workspaceIds: [WS, OTHER_WS],
  sinceS: null,
  tools: [
    { group: 0, tool: 'lookup', server: 'srv-a' },
    { group: 1, tool: 'refund', server: 'srv-a' },
  ],
};
const SERVERS = { orgId: ORG, workspaceIds: [WS], sinceS: null, servers: ['srv-a'] };

export interface CallPairsOptions {
  seal: (store: TraceStore) => Promise<void>;
}

export function callPairsContract(engine: string, open: () => Promise<TraceStore>, options: CallPairsOptions): void {
  describe(`one MCP call, one tool call: ${engine}`, () => {
    let store: TraceStore;
    const stored = new Map<string, SpanRow>();
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });

    async function expectCounted(what: string): Promise<void> {
      const spans = counted([...stored.values()]);
      for (const q of QUERIES) expectSameRows(await store.aggregate(q), reference(spans, q));
      expect(await store.toolUsage(TOOLS), what).toEqual(toolUsageReference(spans, TOOLS));
      expect(await store.serverUsage(SERVERS), what).toEqual(serverUsageReference(spans, SERVERS));
    }

    const all = scenarios();
    it.each(all.map((s) => [s.what, s] as const))('%s: exact after every step', async (_what, scenario) => {
      for (const [i, step] of scenario.steps.entries()) {
        if (step === 'seal') await options.seal(store);
        else {
          const fresh = step.filter((s) => !stored.has(identity(s))).length;
          expect(await store.insertSpans(step)).toEqual({ stored: fresh, duplicates: step.length - fresh });
          for (const s of step) if (!stored.has(identity(s))) stored.set(identity(s), s);
        }
        await expectCounted(`${scenario.what}, step ${i}`);
      }
    });

    it('counts each call once, whatever the order: totals counted by hand', async () => {
      await options.seal(store);
      await expectCounted('all sealed');
      // In sk-m's traces: 12 paired calls (one with two servers: 13 counted), 3 pairs of spans that
      // are no pair (6), and 2 clients whose unpaired server spans are in traces of their own (2).
      const [row] = await store.aggregate(base);
      expect(row?.values.tool_calls).toBe(13 + 6 + 2);
      // Every workspace's calls, whatever their trace: 20 of lookup, 3 of refund; 19 + 3 in WS.
      expect((await store.toolUsage(TOOLS)).map((r) => r.calls)).toEqual([20, 3]);
      expect((await store.serverUsage(SERVERS)).map((r) => r.calls)).toEqual([22]);
    });

    it('pairs a request of more calls than a DuckDB chunk holds, their clients stored before', async () => {
      // 2,100 servers whose clients are stored: every one is probed at once (2,048 rows a chunk).
      const org = 'org-m-many';
      const clients = Array.from({ length: 2100 }, () => {
        const k = next();
        return call({ id: k.toString(16).padStart(32, 'b') }, null, 'lookup', { org_id: org, start_s: DAY + 60 });
      });
      const servers = clients.map((c) => call({ id: c.trace_id }, c, 'lookup', { org_id: org }));
      expect(await store.insertSpans(clients)).toEqual({ stored: 2100, duplicates: 0 });
      expect(await store.insertSpans(servers)).toEqual({ stored: 2100, duplicates: 0 });
      expect(await store.insertSpans([...clients, ...servers])).toEqual({ stored: 0, duplicates: 4200 });
      const usage = { ...TOOLS, orgId: org, tools: [{ group: 0, tool: 'lookup', server: 'srv-a' }] };
      expect((await store.toolUsage(usage)).map((r) => r.calls)).toEqual([2100]);
    });

    it('supersedes the sealed clients of a request of 10,000 servers in traces of many calls', async () => {
      // 1,000 traces of sk-s, each with 10 clients and 20 other calls, sealed; then a server under
      // every client. PostgreSQL matched each superseded client with every sealed call of the
      // organization (300 million comparisons): past the 10 s statement timeout, on every retry.
      const org = 'org-m-sealed';
      const setup: SpanRow[] = [];
      const servers: SpanRow[] = [];
      for (let t = 0; t < 1000; t++) {
        const trace = traceOf(DAY + 60 + t);
        const root = { ...trace.root, org_id: org, skill: 'sk-s' };
        setup.push(root);
        for (let i = 0; i < 30; i++) {
          const client = call(trace, root, i < 10 ? 'lookup' : 'other', { org_id: org, start_s: root.start_s + i });
          setup.push(client);
          if (i < 10) servers.push(call(trace, client, 'lookup', { org_id: org }));
        }
      }
      expect(await store.insertSpans(setup)).toEqual({ stored: 31_000, duplicates: 0 });
      await options.seal(store);
      expect(await store.insertSpans(servers)).toEqual({ stored: 10_000, duplicates: 0 });
      const query: AggregateQuery = {
        ...base,
        orgId: org,
        subject: { skill: 'sk-s' },
        measures: ['tool_calls', 'spans'],
      };
      const counts = { groups: {}, bucket: null, values: { tool_calls: 30_000, spans: 41_000 } };
      expect(await store.aggregate(query)).toEqual([counts]);
      expect(await store.insertSpans(servers)).toEqual({ stored: 0, duplicates: 10_000 });
      await options.seal(store);
      expect(await store.aggregate(query)).toEqual([counts]);
    });

    it('pairs a request of 14,000 calls and their servers, all in one second', async () => {
      // 28,000 spans (OTLP_MAX_SPANS raised), in two traces a call, paired by their MCP request.
      // PostgreSQL looked each span of a pair up among every span of its organization and second
      // (28,000 rows a lookup): past the statement timeout, on every retry.
      const at = { org_id: 'org-m-second', start_s: DAY + 120 };
      const spans = Array.from({ length: 14_000 }, (_, i) => {
        const rq = { ...at, mcp_request: request('sess-b', i) };
        const [t, u] = [traceOf(at.start_s, false), traceOf(at.start_s, false)];
        const client = call(t, null, 'lookup', { ...rq, duration_ms: 500, mcp_side: 'client' });
        return [client, call(u, null, 'lookup', { ...rq, duration_ms: 7, mcp_side: 'server' })];
      }).flat();
      expect(await store.insertSpans(spans)).toEqual({ stored: 28_000, duplicates: 0 });
      // Each call counts once: the client, with the server's duration.
      const usage = { ...TOOLS, orgId: at.org_id, tools: [{ group: 0, tool: 'lookup', server: 'srv-a' }] };
      expect((await store.toolUsage(usage)).map((r) => [r.calls, r.p95LatencyMs])).toEqual([[14_000, 7]]);
    });

    it('stores a request of 10,000 calls that all name one MCP request, once', async () => {
      // A sender reusing one request id: 5,000 clients and 5,000 servers, each in a trace of its
      // own, all sides of one call key. DuckDB paired every client with every server (25 million
      // pairs: "Map maximum size exceeded" after a minute), failing the request on every retry.
      const org = 'org-m-reused';
      const rq = { mcp_request: request('sess-r', 1) };
      const spans = Array.from({ length: 10_000 }, (_, i) => {
        const k = next();
        const side = i % 2 === 0 ? 'client' : 'server';
        return call({ id: k.toString(16).padStart(32, 'c') }, null, 'echo', { org_id: org, ...rq, mcp_side: side });
      });
      const usage = { ...TOOLS, orgId: org, tools: [{ group: 0, tool: 'echo', server: 'srv-a' }] };
      expect(await store.insertSpans(spans)).toEqual({ stored: 10_000, duplicates: 0 });
      const [calls] = (await store.toolUsage(usage)).map((r) => r.calls);
      // Every client counts (none has a server in its trace); a server counts at most once.
      expect(calls).toBeGreaterThanOrEqual(5000);
      expect(calls).toBeLessThanOrEqual(10_000);
      expect(await store.insertSpans(spans)).toEqual({ stored: 0, duplicates: 10_000 });
      expect((await store.toolUsage(usage)).map((r) => r.calls)).toEqual([calls]);
    });
  });
}
