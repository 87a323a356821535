/**
 * Operation 1 through HTTP: the three response shapes, compare, version_ordinal, every validation
 * rule with its field, 404/403 by discoverability, traces_unavailable and the deadline. Expected
 * numbers come from the TypeScript reference over the same generated spans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { measure } from '../contract/trace-reference.ts';
import { END, startStatsApp } from '../helpers/stats-app.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { expectProblem } from '../helpers/problem.ts';

const START = END - 14 * 86400;
let t: TestApp;
let spans: SpanRow[] = [];

beforeAll(async () => {
  ({ t, spans } = await startStatsApp(3));
});
afterAll(async () => {
  await t.close();
});

async function query(body: object, opts: { user?: string; skill?: string; qs?: string } = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/skill/v1/skills/${opts.skill ?? 'sk-1'}/traces/stats/query${opts.qs ?? ''}`,
    headers: await t.auth(opts.user ?? 'u-admin'),
    payload: body,
  });
}
const base = { start_time_unix_seconds: START, end_time_unix_seconds: END };
const inRange = (from: number, to: number, version?: number) => {
  const traces = new Set(
    spans
      .filter((s) => s.category === 'skill_invocation' && (version === undefined || s.skill_version === version))
      .map((s) => s.trace_id),
  );
  return spans.filter((s) => traces.has(s.trace_id) && s.start_s >= from && s.start_s < to);
};

describe('trace statistics shapes', () => {
  it('scalar: one result per query with units, and a previous-period comparison', async () => {
    const res = await query({
      ...base,
      request_type: 'scalar',
      compare: 'previous_period',
      queries: [
        { name: 'traces', measure: 'traces' },
        { name: 'err', measure: 'error_rate' },
        { name: 'p90', measure: 'latency_p90' },
        { name: 'cost', measure: 'cost' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const current = inRange(START, END);
    expect(body.data.request_type).toBe('scalar');
    expect(body.data.results).toEqual([
      { query_name: 'traces', measure: 'traces', value: measure(current, 'traces'), unit: 'count' },
      {
        query_name: 'err',
        measure: 'error_rate',
        value: expect.closeTo(measure(current, 'error_rate') as number, 9),
        unit: 'ratio',
      },
      { query_name: 'p90', measure: 'latency_p90', value: measure(current, 'latency_p90'), unit: 'ms' },
      {
        query_name: 'cost',
        measure: 'cost',
        value: expect.closeTo(measure(current, 'cost') as number, 9),
        unit: 'usd',
      },
    ]);
    expect(body.meta).toEqual({ warnings: [] });
    expect(body.comparison.start_time_unix_seconds).toBe(START - 14 * 86400);
    expect(body.comparison.end_time_unix_seconds).toBe(START);
    expect(body.comparison.data.results[0].value).toBe(measure(inRange(START - 14 * 86400, START), 'traces'));
  });

  it('version_ordinal selects the traces of one skill version', async () => {
    const res = await query(
      { ...base, request_type: 'scalar', queries: [{ name: 't', measure: 'traces' }] },
      { qs: '?version_ordinal=2' },
    );
    expect(res.json().data.results[0].value).toBe(measure(inRange(START, END, 2), 'traces'));
    expectProblem(
      await query(
        { ...base, request_type: 'scalar', queries: [{ name: 't', measure: 'traces' }] },
        { qs: '?version_ordinal=two' },
      ),
      400,
      'invalid_query',
    );
  });

  it('table: group columns then one measure column per query; rows ordered and limited', async () => {
    const res = await query({
      ...base,
      request_type: 'table',
      queries: [
        {
          name: 'tokens',
          measure: 'tokens',
          group_by: ['model'],
          order: { by: 'tokens', direction: 'desc' },
          limit: 3,
        },
        { name: 'traces', measure: 'traces', group_by: ['model'] },
      ],
    });
    const body = res.json();
    expect(body.data.columns).toEqual([
      { name: 'model', column_type: 'group', unit: null },
      { name: 'tokens', column_type: 'measure', unit: 'tokens' },
      { name: 'traces', column_type: 'measure', unit: 'count' },
    ]);
    expect(body.data.rows).toHaveLength(3);
    const current = inRange(START, END);
    const models = [...new Set(current.map((s) => s.model))];
    const expected = models
      .map((m) => ({
        m,
        tokens: measure(
          current.filter((s) => s.model === m),
          'tokens',
        ) as number,
      }))
      .sort((a, b) => b.tokens - a.tokens);
    expect(body.data.rows.map((r: { groups: { model: string } }) => r.groups.model)).toEqual(
      expected.slice(0, 3).map((e) => e.m),
    );
    for (const row of body.data.rows) {
      const subset = current.filter((s) => s.model === row.groups.model);
      expect(row.values).toEqual({ tokens: measure(subset, 'tokens'), traces: measure(subset, 'traces') });
    }
  });

  it('time_series: a point per UTC day in range (zeros and nulls when empty), one series per group', async () => {
    const res = await query({
      ...base,
      end_time_unix_seconds: END + 2 * 86400,
      request_type: 'time_series',
      queries: [
        { name: 'traces', measure: 'traces' },
        { name: 'p99', measure: 'latency_p99' },
        { name: 'by_harness', measure: 'spans', group_by: ['harness'], limit: 2 },
      ],
    });
    const { series } = res.json().data;
    expect(series).toHaveLength(4);
    const [traces, p99] = series;
    expect(traces.points).toHaveLength(16);
    expect(traces.points[0].timestamp_unix_seconds).toBe(START);
    for (const p of traces.points)
      expect(p.value).toBe(
        measure(
          inRange(START, END + 2 * 86400).filter(
            (s) => Math.floor(s.start_s / 86400) * 86400 === p.timestamp_unix_seconds,
          ),
          'traces',
        ),
      );
    expect(traces.points.at(-1)).toEqual({ timestamp_unix_seconds: END + 86400, value: 0 });
    expect(p99.points.at(-1)).toEqual({ timestamp_unix_seconds: END + 86400, value: null });
    expect(series[2].groups).toHaveProperty('harness');
    expect(series[2]).toMatchObject({ query_name: 'by_harness', measure: 'spans', unit: 'count' });
  });

  it('time_series defaults to weekly buckets past 92 days, starting on Mondays', async () => {
    const res = await query({
      start_time_unix_seconds: END - 100 * 86400,
      end_time_unix_seconds: END,
      request_type: 'time_series',
      queries: [{ name: 't', measure: 'traces' }],
    });
    const points = res.json().data.series[0].points as { timestamp_unix_seconds: number }[];
    for (const p of points) expect(new Date(p.timestamp_unix_seconds * 1000).getUTCDay()).toBe(1);
    expect(points.length).toBe(15);
  });
});

describe('trace statistics validation (422 with the field)', () => {
  const q = { name: 'a', measure: 'traces' };
  it.each<[string, object, number, string, string]>([
    [
      'end before start',
      { ...base, end_time_unix_seconds: START, request_type: 'scalar', queries: [q] },
      422,
      'validation_failed',
      '/end_time_unix_seconds',
    ],
    [
      'range over 366 days',
      { ...base, start_time_unix_seconds: END - 367 * 86400, request_type: 'scalar', queries: [q] },
      422,
      'validation_failed',
      '/end_time_unix_seconds',
    ],
    [
      'duplicate query names',
      { ...base, request_type: 'scalar', queries: [q, q] },
      422,
      'validation_failed',
      '/queries/1/name',
    ],
    [
      'group_by on scalar',
      { ...base, request_type: 'scalar', queries: [{ ...q, group_by: ['model'] }] },
      422,
      'validation_failed',
      '/queries/0/group_by',
    ],
    [
      'tables with different group_by',
      {
        ...base,
        request_type: 'table',
        queries: [
          { ...q, group_by: ['model'] },
          { name: 'b', measure: 'spans', group_by: ['tool'] },
        ],
      },
      422,
      'validation_failed',
      '/queries/1/group_by',
    ],
    [
      'more than 3 group_by',
      { ...base, request_type: 'table', queries: [{ ...q, group_by: ['model', 'tool', 'mcp', 'user'] }] },
      422,
      'validation_failed',
      '/queries/0/group_by',
    ],
    [
      'eq without a value',
      { ...base, request_type: 'scalar', queries: [{ ...q, filters: [{ key: 'model', op: 'eq' }] }] },
      422,
      'validation_failed',
      '/queries/0/filters/0/value',
    ],
    [
      'in without an array',
      { ...base, request_type: 'scalar', queries: [{ ...q, filters: [{ key: 'model', op: 'in', value: 'x' }] }] },
      422,
      'validation_failed',
      '/queries/0/filters/0/value',
    ],
    [
      'unknown order.by',
      {
        ...base,
        request_type: 'table',
        queries: [{ ...q, group_by: ['model'], order: { by: 'nope', direction: 'asc' } }],
      },
      422,
      'validation_failed',
      '/queries/0/order/by',
    ],
    [
      'unknown measure',
      { ...base, request_type: 'scalar', queries: [{ name: 'a', measure: 'vibes' }] },
      422,
      'invalid_field',
      '/queries/0/measure',
    ],
    [
      'filter key not a dimension',
      { ...base, request_type: 'scalar', queries: [{ ...q, filters: [{ key: 'colour', op: 'eq', value: 'x' }] }] },
      422,
      'invalid_field',
      '/queries/0/filters/0/key',
    ],
    ['bad request_type', { ...base, request_type: 'pie', queries: [q] }, 422, 'invalid_field', '/request_type'],
    ['no queries', { ...base, request_type: 'scalar', queries: [] }, 422, 'invalid_field', '/queries'],
    [
      '21 queries',
      {
        ...base,
        request_type: 'scalar',
        queries: Array.from({ length: 21 }, (_, i) => ({ name: `q${i}`, measure: 'spans' })),
      },
      422,
      'invalid_field',
      '/queries',
    ],
    [
      'negative limit',
      { ...base, request_type: 'table', queries: [{ ...q, limit: -1 }] },
      422,
      'invalid_field',
      '/queries/0/limit',
    ],
  ])('%s', async (_name, body, status, code, field) => {
    const problem = expectProblem(await query(body), status, code as never);
    const fields =
      problem.field !== undefined ? [problem.field] : problem.errors.map((e: { field: string }) => e.field);
    expect(fields).toContain(field);
  });

  it('rejects a missing required field and a non-object body', async () => {
    expectProblem(await query({ ...base, queries: [q] }), 422, 'invalid_field');
    const res = await t.app.inject({
      method: 'POST',
      url: '/skill/v1/skills/sk-1/traces/stats/query',
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
      payload: '[]',
    });
    expectProblem(res, 400, 'invalid_request');
  });
});

describe('trace statistics access and failures', () => {
  const body = { ...base, request_type: 'scalar', queries: [{ name: 'a', measure: 'traces' }] };
  it('404 for an unknown, non-skill or other-org skill; 403 for an unreadable one', async () => {
    expectProblem(await query(body, { skill: 'nope' }), 404, 'not_found');
    expectProblem(await query(body, { skill: 'ag-1' }), 404, 'not_found');
    expectProblem(await query(body, { skill: 'sk-b1' }), 404, 'not_found');
    expectProblem(await query(body, { user: 'u-none' }), 403, 'access_denied');
    expectProblem(await query({ ...body, workspace_id: 'ws-b' }), 404, 'not_found');
  });

  it('a viewer sees only the spans of its readable workspaces', async () => {
    const res = await query(body, { user: 'u-viewer' });
    expect(res.json().data.results[0].value).toBe(measure(inRange(START, END), 'traces'));
  });

  it('503 traces_unavailable when the trace store is down, while the registry keeps answering', async () => {
    const own = await startTestApp();
    await own.traces.close();
    expectProblem(
      await own.app.inject({
        method: 'POST',
        url: '/skill/v1/skills/sk-1/traces/stats/query',
        headers: await own.auth('u-admin'),
        payload: body,
      }),
      503,
      'traces_unavailable',
    );
    expect(
      (await own.app.inject({ method: 'GET', url: '/mcp/v1/tools', headers: await own.auth('u-admin') })).statusCode,
    ).toBe(200);
    expect((await own.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    await own.close();
  });
});
