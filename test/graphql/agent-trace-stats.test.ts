/**
 * Agent.traceStats answers what REST's agent statistics endpoint answers (same handler), spends the
 * operation's trace-work budget like Skill.traceStats, and is authorized like any agent read, also
 * through federation `_entities`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { errorCodes, gql } from './helpers.ts';
import { restAndGraphql } from './trace-stats-shape.ts';

const DAY = 86_400;
const START = 1_767_225_600; // 2026-01-01T00:00:00Z

/**
 * 40 spans of 8 traces in ws-a-team: an invocation of sk-1, model calls and tool calls each; the
 * first span of traces 0-2 names ag-1 (its traces), of trace 3 ag-2. Trace 9 in ws-a-other is ag-3's.
 */
function span(i: number, overrides: Partial<SpanRow> = {}): SpanRow {
  const trace = i % 8;
  const kind = Math.floor(i / 8) % 3;
  return spanRow(i, {
    trace_id: String(trace).padStart(32, 'a'),
    start_s: START + (i % 5) * DAY + i,
    duration_ms: 100 + i,
    user: `user-${i % 3}`,
    session: `sess-${trace}`,
    agent: i < 3 ? 'ag-1' : i === 3 ? 'ag-2' : null,
    ...(kind === 0
      ? { category: 'skill_invocation', skill: 'sk-1', skill_version: 1, is_error: i % 5 === 0 }
      : kind === 1
        ? { category: 'model_call', model: i % 2 === 0 ? 'claude-haiku-4' : 'gpt-4o', tokens: 10 * i, cost: 0.01 * i }
        : { category: 'tool_call', tool: i % 2 === 0 ? 'create_issue' : 'run_query', mcp: 'srv-github' }),
    ...overrides,
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const other = (i: number) =>
    span(100 + i, { trace_id: '9'.padStart(32, 'b'), workspace_id: 'ws-a-other', agent: 'ag-3' });
  await t.traces.insertSpans([...Array.from({ length: 40 }, (_, i) => span(i)), ...[0, 1, 2].map(other)]);
});
afterAll(async () => {
  await t.close();
});

const range = `startTimeUnixSeconds: ${START}, endTimeUnixSeconds: ${START + 7 * DAY}`;
const restRange = { start_time_unix_seconds: START, end_time_unix_seconds: START + 7 * DAY };
const both = (restBody: Record<string, unknown>, input: string) =>
  restAndGraphql(t, '/agent/v1/agents/ag-1/traces/stats/query', 'agent', 'ag-1', restBody, input);
const ofAg1 = Array.from({ length: 40 }, (_, i) => span(i)).filter((s) => Number(s.trace_id.slice(-1)) < 3);

describe('Agent.traceStats', () => {
  it('scalar, with the previous period, equals REST: the spans of the traces the agent takes part in', async () => {
    const { rest, graphql } = await both(
      {
        ...restRange,
        request_type: 'scalar',
        compare: 'previous_period',
        queries: [
          { name: 'spans', measure: 'spans' },
          { name: 'traces', measure: 'traces' },
          { name: 'tokens', measure: 'tokens' },
          { name: 'invocations', measure: 'skill_invocations' },
        ],
      },
      `{ ${range}, requestType: SCALAR, compare: PREVIOUS_PERIOD, queries: [{ name: "spans", measure: SPANS }, { name: "traces", measure: TRACES }, { name: "tokens", measure: TOKENS }, { name: "invocations", measure: SKILL_INVOCATIONS }] }`,
    );
    expect(graphql).toEqual(rest);
    const values = Object.fromEntries(
      graphql.data.results.map((r: { queryName: string; value: number }) => [r.queryName, r.value]),
    );
    expect(values).toEqual({
      spans: ofAg1.length,
      traces: 3,
      tokens: ofAg1.reduce((n, s) => n + s.tokens, 0),
      invocations: ofAg1.filter((s) => s.category === 'skill_invocation').length,
    });
    expect(values.spans).toBe(15);
  });

  it('a table by tool and a time series by model equal REST', async () => {
    const table = await both(
      {
        ...restRange,
        request_type: 'table',
        queries: [
          { name: 'calls', measure: 'tool_calls', group_by: ['tool'], filters: [{ key: 'tool', op: 'exists' }] },
        ],
      },
      `{ ${range}, requestType: TABLE, queries: [{ name: "calls", measure: TOOL_CALLS, groupBy: [TOOL], filters: [{ key: TOOL, op: EXISTS }] }] }`,
    );
    expect(table.graphql).toEqual(table.rest);
    const rows = table.graphql.data.rows.map((r: { groups: { tool: string }; values: { calls: number } }) => [
      r.groups.tool,
      r.values.calls,
    ]);
    const calls = (tool: string) => ofAg1.filter((s) => s.tool === tool).length;
    expect(rows).toEqual(
      expect.arrayContaining([
        ['create_issue', calls('create_issue')],
        ['run_query', calls('run_query')],
      ]),
    );
    const series = await both(
      {
        ...restRange,
        request_type: 'time_series',
        bucket: 'day',
        queries: [{ name: 'cost', measure: 'cost', group_by: ['model'] }],
      },
      `{ ${range}, requestType: TIME_SERIES, bucket: DAY, queries: [{ name: "cost", measure: COST, groupBy: [MODEL] }] }`,
    );
    expect(series.graphql).toEqual(series.rest);
    expect(series.graphql.data.series.length).toBeGreaterThan(1);
  });

  it('spends the operation’s trace-work budget: two of five year-long requests run, the rest are refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const heavy = {
      requestType: 'SCALAR',
      compare: 'PREVIOUS_PERIOD',
      startTimeUnixSeconds: now - 366 * DAY,
      endTimeUnixSeconds: now,
      queries: Array.from({ length: 20 }, (_, k) => ({
        name: `q${k}`,
        measure: 'SPANS',
        filters: [{ key: 'MODEL', op: 'NEQ', value: `m${k}` }],
      })),
    };
    const reps = Array.from({ length: 5 }, () => ({ __typename: 'Agent', id: 'ag-1' }));
    const res = await gql(
      t,
      'query($r: [_Any!]!, $i: TraceStatsInput!) { _entities(representations: $r) { ... on Agent { traceStats(input: $i) { meta { warnings } } } } }',
      { r: reps, i: heavy },
    );
    expect(res.status).toBe(400);
    const answered = (res.data._entities as ({ traceStats: unknown } | null)[]).filter((e) => e?.traceStats != null);
    expect(answered).toHaveLength(2); // 2 × 20 × 2 × 54 = 4,320 units, the whole budget
    expect(res.errors).toHaveLength(3);
    for (const error of res.errors ?? [])
      expect(error.extensions).toMatchObject({ code: 'OPERATION_TOO_LARGE', limit: 'trace_work', max: 4320 });
    // One budget for both fields: of two agent requests and a skill's (each half the budget), the
    // one that spends last is refused, whichever it is.
    const mixed = await gql(
      t,
      'query($i: TraceStatsInput!) { agent(id: "ag-1") { a: traceStats(input: $i) { meta { warnings } } b: traceStats(input: $i) { meta { warnings } } } skill(id: "sk-1") { traceStats(input: $i) { meta { warnings } } } }',
      { i: heavy },
    );
    expect(Object.values(errorCodes(mixed))).toEqual(['OPERATION_TOO_LARGE']);
  });

  it('is authorized like an agent read: unreadable 403, another organization’s or unknown 404, also via _entities', async () => {
    const input = `{ ${range}, requestType: SCALAR, queries: [{ name: "n", measure: SPANS }] }`;
    const field = `traceStats(input: ${input}) { data { ... on ScalarStats { results { value } } } }`;
    const viewer = await gql(t, `{ agent(id: "ag-3") { ${field} } }`, undefined, 'u-viewer');
    expect(viewer.data.agent).toBeNull();
    expect(errorCodes(viewer)).toEqual({ agent: 'access_denied' });
    expect(viewer.errors?.[0]?.extensions.http?.status).toBe(403);
    const rest = await t.app.inject({
      method: 'POST',
      url: '/agent/v1/agents/ag-3/traces/stats/query',
      headers: await t.auth('u-viewer'),
      payload: { ...restRange, request_type: 'scalar', queries: [{ name: 'n', measure: 'spans' }] },
    });
    expect(rest.statusCode).toBe(403);
    for (const [id, user, org] of [
      ['ag-1', 'u-b', 'org-b'],
      ['ag-b1', 'u-admin', 'org-a'],
      ['no-such-agent', 'u-admin', 'org-a'],
    ] as const) {
      const res = await gql(t, `{ agent(id: "${id}") { ${field} } }`, undefined, user, org);
      expect(errorCodes(res)).toEqual({ agent: 'not_found' });
    }
    const entities = await gql(
      t,
      `query($r: [_Any!]!) { _entities(representations: $r) { ... on Agent { id ${field} } } }`,
      {
        r: [
          { __typename: 'Agent', id: 'ag-3' },
          { __typename: 'Agent', id: 'ag-1' },
        ],
      },
      'u-viewer',
    );
    expect(errorCodes(entities)).toEqual({ '_entities.0': 'access_denied' });
    expect(entities.data._entities[1].traceStats.data.results[0].value).toBe(ofAg1.length);
    // ag-3's own spans are in a workspace u-admin reads: its traces only.
    const admin = await gql(t, `{ agent(id: "ag-3") { ${field} } }`);
    expect(admin.data.agent.traceStats.data.results[0].value).toBe(3);
  });
});
