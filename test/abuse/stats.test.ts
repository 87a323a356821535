/**
 * Abuse of the statistics operation: an answer whose size has no bound. After
 * 1,000 spans with distinct users, one small request asked for 20 × 1,000 groups × 53 weeks and got
 * a 354 MB answer after 18 s. Now its size is computed before the store is asked and refused over
 * STATS_MAX_POINTS; a large request under the bound is answered with the groups it can show, and
 * the rows an engine returns are bounded by them, however many distinct values the spans hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const END = Date.UTC(2026, 9, 1) / 1000;
const START = END - 366 * 86400;
const USERS = 3000;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  const spans: SpanRow[] = Array.from({ length: USERS }, (_, i) =>
    spanRow(i + 1, {
      trace_id: (i + 1).toString(16).padStart(32, 'c'),
      span_id: (i + 1).toString(16).padStart(16, 'd'),
      name: 'invoke_skill',
      start_s: START + (i % 360) * 86400,
      duration_ms: 10 + (i % 97),
      category: 'skill_invocation',
      skill: 'sk-1',
      skill_version: 1,
      model: `m-${i % 7}`,
      user: `user-${String(i).padStart(5, '0')}`,
      session: `s-${i}`,
      tokens: i % 50,
      is_error: i % 10 === 0,
    }),
  );
  await t.traces.insertSpans(spans);
});
afterAll(async () => {
  await t.close();
});

const query = async (body: object) =>
  t.app.inject({
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    headers: await t.auth('u-admin'),
    payload: body,
  });
const byUser = (n: number, limit: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `q${i}`, measure: 'spans', group_by: ['user'], limit }));

describe('the size of a statistics answer is bounded before the work', () => {
  it('refuses 20 queries × 1,000 users × 53 weeks with 422, naming the size, before asking the store', async () => {
    const started = Date.now();
    const res = await query({
      start_time_unix_seconds: START,
      end_time_unix_seconds: END,
      request_type: 'time_series',
      queries: byUser(20, 1000),
    });
    const body = expectProblem(res, 422, 'validation_failed');
    expect(body.detail).toMatch(
      /^the answer could hold 1,060,000 values \(queries × groups × buckets\), over the limit of 50,000/,
    );
    expect(body.errors.map((e: { field: string }) => e.field)).toEqual([
      '/queries',
      '/end_time_unix_seconds',
      '/bucket',
    ]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('counts the comparison period twice and daily buckets as days', async () => {
    const res = await query({
      start_time_unix_seconds: END - 100 * 86400,
      end_time_unix_seconds: END,
      request_type: 'time_series',
      bucket: 'day',
      compare: 'previous_period',
      queries: byUser(1, 300),
    });
    expect(expectProblem(res, 422, 'validation_failed').detail).toMatch(
      /^the answer could hold 60,000 values \(queries × groups × buckets × 2 for compare\)/,
    );
  });

  it('answers a request under the bound with the top groups only, whatever the number of distinct users', async () => {
    const res = await query({
      start_time_unix_seconds: START,
      end_time_unix_seconds: END,
      request_type: 'time_series',
      queries: [
        {
          name: 'top',
          measure: 'skill_invocations',
          group_by: ['user'],
          limit: 500,
          order: { by: 'skill_invocations', direction: 'desc' },
        },
      ],
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const { series } = res.json().data;
    expect(series).toHaveLength(500);
    // Every user has one invocation: the tie is broken by the user id, ascending.
    expect(series.map((s: { groups: { user: string } }) => s.groups.user)).toEqual(
      Array.from({ length: 500 }, (_, i) => `user-${String(i).padStart(5, '0')}`),
    );
    expect(series[0].points).toHaveLength(53);
  });

  it('a table ranks and limits its rows with every query filled in for them', async () => {
    const res = await query({
      start_time_unix_seconds: START,
      end_time_unix_seconds: END,
      request_type: 'table',
      queries: [
        { name: 'tokens', measure: 'tokens', group_by: ['user'], limit: 3, order: { by: 'tokens', direction: 'desc' } },
        {
          name: 'errors',
          measure: 'error_rate',
          group_by: ['user'],
          filters: [{ key: 'model', op: 'eq', value: 'm-0' }],
        },
      ],
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    // tokens = i % 50: 49 is the largest, held by users 49, 99, 149, … (ties by user id).
    expect(res.json().data.rows).toEqual([
      { groups: { user: 'user-00049' }, values: { tokens: 49, errors: 0 } },
      { groups: { user: 'user-00099' }, values: { tokens: 49, errors: null } },
      { groups: { user: 'user-00149' }, values: { tokens: 49, errors: null } },
    ]);
  });
});
