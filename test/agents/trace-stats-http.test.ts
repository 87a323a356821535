/**
 * An agent's trace statistics through HTTP, on the embedded engines and on PostgreSQL (when
 * reachable): OTLP spans sent by users, by the agent's own client token (spans naming no agent are
 * its own), by another agent's API key and by another organization, then
 * POST /agent/v1/agents/{id}/traces/stats/query. Expected numbers are a plain computation over the
 * spans as sent: a trace counts for ag-1 when any of its spans is ag-1's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const DAY = 86400;
const START = Date.UTC(2026, 9, 1) / 1000;
const END = START + 14 * DAY;

/** One span as sent, and what the plain computation needs of it. */
interface Sent {
  org: string;
  workspace: string;
  trace: string;
  /** The agent the span is stored with (otlp/ingest.ts), or null. */
  agent: string | null;
  kind: 'root' | 'model' | 'tool';
  model: string | null;
  tokens: number;
  start: number;
}

const sent: Sent[] = [];
let spanNo = 0;

/** One OTLP span of `trace` and its record; `claims` are the agent attributes it carries. */
function span(
  s: Omit<Sent, 'agent' | 'model' | 'tokens'> & { agent: string | null; model?: string; tokens?: number },
  claims: Record<string, string>,
) {
  spanNo++;
  const model = s.model ?? null;
  const tokens = s.tokens ?? 0;
  sent.push({ ...s, model, tokens });
  const op = s.kind === 'root' ? 'invoke_agent' : s.kind === 'model' ? 'chat' : 'execute_tool';
  const start = BigInt(s.start) * 1_000_000_000n;
  return {
    traceId: s.trace,
    spanId: spanNo.toString(16).padStart(16, 'e'),
    name: op,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 40_000_000n),
    attributes: attrs({
      'gen_ai.operation.name': op,
      ...(model === null ? {} : { 'gen_ai.request.model': model }),
      ...(tokens === 0 ? {} : { 'gen_ai.usage.input_tokens': { intValue: String(tokens) } }),
      ...(s.kind === 'tool' ? { 'gen_ai.tool.name': 'search' } : {}),
      ...claims,
    }),
  };
}

/**
 * A trace: a root naming `rootClaims` (stored as `rootAgent`), a model call and a tool call naming
 * `childClaims` (stored as `childAgent`).
 */
function trace(
  o: { org?: string; workspace: string; n: number; start: number },
  root: [Record<string, string>, string | null],
  child: [Record<string, string>, string | null] = [{}, null],
) {
  const common = { org: o.org ?? 'org-a', workspace: o.workspace, trace: o.n.toString(16).padStart(32, 'd') };
  const model = o.n % 2 === 0 ? 'gpt-4o' : 'claude-sonnet-4';
  return [
    span({ ...common, kind: 'root', agent: root[1], start: o.start }, root[0]),
    span({ ...common, kind: 'model', agent: child[1], model, tokens: 100 * o.n, start: o.start + 1 }, child[0]),
    span({ ...common, kind: 'tool', agent: child[1], start: o.start + 2 }, child[0]),
  ];
}

const AG1 = { 'gen_ai.agent.id': 'ag-1' };
const AG3 = { 'gen_ai.agent.id': 'ag-3' };

/** The spans each sender sends, by workspace. */
function traffic() {
  const admin = {
    'ws-a-team': [
      // ag-1's traces over the range, one in the previous period; the children name no agent.
      ...[0, 1, 2, 3, 4, 5].flatMap((d) =>
        trace({ workspace: 'ws-a-team', n: 10 + d, start: START + d * 2 * DAY + 3600 }, [AG1, 'ag-1']),
      ),
      ...trace({ workspace: 'ws-a-team', n: 20, start: START - 3 * DAY }, [AG1, 'ag-1']),
      // ag-3's trace whose model call ag-1 makes: a trace of both.
      ...trace({ workspace: 'ws-a-team', n: 21, start: START + DAY }, [AG3, 'ag-3'], [AG1, 'ag-1']),
    ],
    // ag-3's own traces, and one of ag-1 in a workspace a viewer of ws-a-team cannot read.
    'ws-a-other': [
      ...trace({ workspace: 'ws-a-other', n: 30, start: START + 2 * DAY }, [AG3, 'ag-3']),
      ...trace({ workspace: 'ws-a-other', n: 31, start: START + 5 * DAY }, [AG3, 'ag-3']),
      ...trace({ workspace: 'ws-a-other', n: 32, start: START + 4 * DAY }, [AG1, 'ag-1']),
    ],
  };
  // Sent with ag-1's client token, naming no agent: ag-1's (the sender is the agent).
  const client = trace({ workspace: 'ws-a-team', n: 40, start: START + 6 * DAY }, [{}, 'ag-1'], [{}, 'ag-1']);
  // Sent with ag-2's API key, naming no agent: ag-2's.
  const apiKey = trace({ workspace: 'ws-a-sub', n: 41, start: START + 6 * DAY }, [{}, 'ag-2'], [{}, 'ag-2']);
  // org-b names an agent "ag-1" by name: its own, never org-a's ag-1.
  const orgB = trace(
    { org: 'org-b', workspace: 'ws-b', n: 50, start: START + DAY },
    [{ 'gen_ai.agent.name': 'ag-1' }, 'ag-1'],
    [{ 'gen_ai.agent.name': 'ag-1' }, 'ag-1'],
  );
  return { admin, client, apiKey, orgB };
}

/** The plain computation: ag-1's spans (org-a) in [from, to) and `workspaces`. */
function ofAgent(agent: string, from: number, to: number, workspaces?: string[]): Sent[] {
  const traces = new Set(sent.filter((s) => s.org === 'org-a' && s.agent === agent).map((s) => s.trace));
  return sent.filter(
    (s) =>
      s.org === 'org-a' &&
      traces.has(s.trace) &&
      s.start >= from &&
      s.start < to &&
      (workspaces === undefined || workspaces.includes(s.workspace)),
  );
}
const plain = (spans: Sent[]) => ({
  spans: spans.length,
  traces: new Set(spans.map((s) => s.trace)).size,
  tokens: spans.reduce((a, s) => a + s.tokens, 0),
  tool_calls: spans.filter((s) => s.kind === 'tool').length,
});

function agentStatsSuite(engine: string, env: () => Record<string, string>): void {
  describe(`an agent's trace statistics over HTTP: ${engine}`, () => {
    let t: TestApp;
    const query = async (body: unknown, o: { agent?: string; header?: Record<string, string> } = {}) =>
      t.app.inject({
        method: 'POST',
        url: `/agent/v1/agents/${o.agent ?? 'ag-1'}/traces/stats/query`,
        headers: { ...(o.header ?? (await t.auth('u-admin'))), 'content-type': 'application/json' },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const base = { start_time_unix_seconds: START, end_time_unix_seconds: END };
    const MEASURES = ['spans', 'traces', 'tokens', 'tool_calls'] as const;
    const scalar = { ...base, request_type: 'scalar', queries: MEASURES.map((m) => ({ name: m, measure: m })) };
    const values = async (body: object, o: Parameters<typeof query>[1] = {}) => {
      const res = await query(body, o);
      expect(res.statusCode, res.body).toBe(200);
      const results = res.json().data.results as { query_name: string; value: number }[];
      return Object.fromEntries(results.map((r) => [r.query_name, r.value]));
    };

    beforeAll(async () => {
      sent.length = 0;
      t = await startTestApp({ env: env() });
      const { admin, client, apiKey, orgB } = traffic();
      const token = await (
        await loadDevIssuer(t.dataDir)
      ).mint({
        sub: 'client-ag-1',
        org: 'org-a',
        claims: { client_id: 'client-ag-1' },
      });
      const send = async (authorization: string, workspace: string, spans: object[]) => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/traces',
          headers: { authorization, 'content-type': 'application/json' },
          payload: JSON.stringify(otlpTraceBody({ resource: attrs({ 'workspace.id': workspace }), spans })),
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json(), 'every span stored').toEqual({});
      };
      const adminAuth = (await t.auth('u-admin')).authorization;
      for (const [workspace, spans] of Object.entries(admin)) await send(adminAuth, workspace, spans);
      await send(`Bearer ${token}`, 'ws-a-team', client);
      await send(`Bearer ${TEST_API_KEY}`, 'ws-a-sub', apiKey);
      await send((await t.auth('u-b', 'org-b')).authorization, 'ws-b', orgB);
    });
    afterAll(async () => {
      await t.close();
    });

    it('scalar: every span of the traces ag-1 takes part in, the previous period compared', async () => {
      const res = await query({ ...scalar, compare: 'previous_period' });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      const want = plain(ofAgent('ag-1', START, END));
      // 6 traces in ws-a-team, the one shared with ag-3, one in ws-a-other, the client's own.
      expect(want).toEqual({
        spans: 27,
        traces: 9,
        tokens: 100 * (10 + 11 + 12 + 13 + 14 + 15 + 21 + 32 + 40),
        tool_calls: 9,
      });
      expect(body.data).toEqual({
        request_type: 'scalar',
        results: [
          { query_name: 'spans', measure: 'spans', value: want.spans, unit: 'count' },
          { query_name: 'traces', measure: 'traces', value: want.traces, unit: 'count' },
          { query_name: 'tokens', measure: 'tokens', value: want.tokens, unit: 'tokens' },
          { query_name: 'tool_calls', measure: 'tool_calls', value: want.tool_calls, unit: 'count' },
        ],
      });
      expect(body.meta).toEqual({ warnings: [] });
      expect(body.comparison.start_time_unix_seconds).toBe(START - 14 * DAY);
      expect(body.comparison.data.results[1].value).toBe(plain(ofAgent('ag-1', START - 14 * DAY, START)).traces);
      expect(body.comparison.data.results[1].value).toBe(1);
    });

    it('other agents: ag-3 and ag-2 count their own traces, ag-2 from its API key', async () => {
      expect(await values(scalar, { agent: 'ag-3' })).toEqual(plain(ofAgent('ag-3', START, END)));
      expect((await values(scalar, { agent: 'ag-3' })).traces).toBe(3);
      expect(await values(scalar, { agent: 'ag-2' })).toEqual({ spans: 3, traces: 1, tokens: 4100, tool_calls: 1 });
    });

    it('table by model and by agent; filters on the agent dimension', async () => {
      const res = await query({
        ...base,
        request_type: 'table',
        queries: [
          { name: 'spans', measure: 'spans', group_by: ['model'], order: { by: 'spans', direction: 'desc' } },
          { name: 'tokens', measure: 'tokens', group_by: ['model'] },
        ],
      });
      expect(res.statusCode, res.body).toBe(200);
      const spans = ofAgent('ag-1', START, END);
      const byModel = (m: string | null) => spans.filter((s) => s.model === m);
      // By spans, descending: the roots and tool calls (no model), then gpt-4o (5 traces), claude-sonnet-4 (4).
      expect(res.json().data.rows).toEqual(
        [null, 'gpt-4o', 'claude-sonnet-4'].map((m) => ({
          groups: { model: m },
          values: { spans: byModel(m).length, tokens: plain(byModel(m)).tokens },
        })),
      );
      const agents = await query({
        ...base,
        request_type: 'table',
        queries: [{ name: 'spans', measure: 'spans', group_by: ['agent'], order: { by: 'agent', direction: 'asc' } }],
      });
      const byAgent = (a: string | null) => spans.filter((s) => s.agent === a).length;
      expect(agents.json().data.rows).toEqual(
        ['ag-1', 'ag-3', null].map((a) => ({ groups: { agent: a }, values: { spans: byAgent(a) } })),
      );
      const filtered = await values({
        ...base,
        request_type: 'scalar',
        queries: [{ name: 'spans', measure: 'spans', filters: [{ key: 'agent', op: 'eq', value: 'ag-3' }] }],
      });
      expect(filtered).toEqual({ spans: 1 });
    });

    it('time_series: ag-1 traces per day, zeros on days without any', async () => {
      const res = await query({
        ...base,
        request_type: 'time_series',
        queries: [{ name: 'traces', measure: 'traces' }],
      });
      expect(res.statusCode, res.body).toBe(200);
      const [series] = res.json().data.series;
      const spans = ofAgent('ag-1', START, END);
      expect(series.points).toEqual(
        Array.from({ length: 14 }, (_, d) => ({
          timestamp_unix_seconds: START + d * DAY,
          value: plain(spans.filter((s) => Math.floor((s.start - START) / DAY) === d)).traces,
        })),
      );
    });

    it('workspaces: the readable ones, or the one asked for', async () => {
      const team = ['ws-a-team', 'ws-a-sub'];
      expect(await values(scalar, { header: await t.auth('u-viewer') })).toEqual(
        plain(ofAgent('ag-1', START, END, team)),
      );
      expect(await values({ ...scalar, workspace_id: 'ws-a-other' })).toEqual(
        plain(ofAgent('ag-1', START, END, ['ws-a-other'])),
      );
      expect((await values({ ...scalar, workspace_id: 'ws-a-other' })).traces).toBe(1);
      expectProblem(
        await query({ ...scalar, workspace_id: 'ws-a-other' }, { header: await t.auth('u-viewer') }),
        403,
        'access_denied',
      );
      expectProblem(await query({ ...scalar, workspace_id: 'ws-b' }), 404, 'not_found');
    });

    it('another organization: its own agent named "ag-1" never counts; its callers cannot see org-a agents', async () => {
      expectProblem(await query(scalar, { header: await t.auth('u-b', 'org-b') }), 404, 'not_found');
      expectProblem(await query(scalar, { agent: 'ag-b1' }), 404, 'not_found');
      expect(await values(scalar, { agent: 'ag-b1', header: await t.auth('u-b', 'org-b') })).toEqual({
        spans: 0,
        traces: 0,
        tokens: 0,
        tool_calls: 0,
      });
    });

    it('404 unknown or not an agent, 403 unreadable, 401 without credentials, 400/422 bad requests', async () => {
      expectProblem(await query(scalar, { agent: 'nope' }), 404, 'not_found');
      expectProblem(await query(scalar, { agent: 'sk-1' }), 404, 'not_found');
      expectProblem(await query(scalar, { agent: 'ag-3', header: await t.auth('u-viewer') }), 403, 'access_denied');
      const anonymous = await t.app.inject({
        method: 'POST',
        url: '/agent/v1/agents/ag-1/traces/stats/query',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(scalar),
      });
      expect(anonymous.statusCode).toBe(401);
      expectProblem(
        await query(scalar, { header: { authorization: `Bearer ${'agk_unknown'.padEnd(TEST_API_KEY.length, '0')}` } }),
        401,
        'invalid_api_key',
      );
      expectProblem(await query('[]'), 400, 'invalid_request');
      expectProblem(await query({ ...scalar, request_type: 'pie' }), 422, 'invalid_field');
      const rule = expectProblem(
        await query({
          ...base,
          request_type: 'scalar',
          queries: [{ name: 'a', measure: 'spans', group_by: ['model'] }],
        }),
        422,
        'validation_failed',
      );
      expect(rule.errors.map((e: { field: string }) => e.field)).toEqual(['/queries/0/group_by']);
    });

    it('refuses an answer of too many points before any work, as operation 1', async () => {
      const res = await query({
        start_time_unix_seconds: END - 365 * DAY,
        end_time_unix_seconds: END,
        request_type: 'time_series',
        queries: Array.from({ length: 20 }, (_, i) => ({
          name: `q${i}`,
          measure: 'spans',
          group_by: ['user'],
          limit: 1000,
        })),
      });
      const body = expectProblem(res, 422, 'validation_failed');
      expect(body.detail).toMatch(/^the answer could hold 1,060,000 values \(queries × groups × buckets\)/);
      expect(body.errors.map((e: { field: string }) => e.field)).toEqual([
        '/queries',
        '/end_time_unix_seconds',
        '/bucket',
      ]);
    });
  });
}

agentStatsSuite('sqlite and duckdb', () => ({}));

const server = await fileDatabase('gw_agent_stats');
if (server !== null) agentStatsSuite('postgres', () => server);
