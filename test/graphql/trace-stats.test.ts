/**
 * Skill.traceStats answers what REST operation 1 answers (same handler), in the three shapes,
 * with the same validation and authorization.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { errorCodes, gql } from './helpers.ts';
import { restAndGraphql } from './trace-stats-shape.ts';

const DAY = 86_400;
const START = 1_767_225_600; // 2026-01-01T00:00:00Z

function span(i: number, overrides: Partial<SpanRow> = {}): SpanRow {
  return spanRow(i, {
    trace_id: String(i % 7).padStart(32, 'a'),
    span_id: `s${i}`,
    name: 'invoke_skill',
    start_s: START + (i % 5) * DAY + i,
    duration_ms: 100 + i,
    category: 'skill_invocation',
    harness: i % 2 === 0 ? 'claude-code' : 'cursor',
    skill: 'sk-1',
    skill_version: 1,
    model: 'model-a',
    user: `user-${i % 3}`,
    session: `sess-${i % 4}`,
    tokens: 10 * i,
    cost: 0.01 * i,
    is_error: i % 5 === 0,
    ...overrides,
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await t.traces.insertSpans(Array.from({ length: 40 }, (_, i) => span(i)));
});
afterAll(async () => {
  await t.close();
});

const both = (restBody: Record<string, unknown>, input: string) =>
  restAndGraphql(t, '/skill/v1/skills/sk-1/traces/stats/query', 'skill', 'sk-1', restBody, input);

const range = `startTimeUnixSeconds: ${START}, endTimeUnixSeconds: ${START + 7 * DAY}`;
const restRange = { start_time_unix_seconds: START, end_time_unix_seconds: START + 7 * DAY };

describe('Skill.traceStats', () => {
  it('scalar, with the previous period, equals REST', async () => {
    const { rest, graphql } = await both(
      {
        ...restRange,
        request_type: 'scalar',
        compare: 'previous_period',
        queries: [
          { name: 'n', measure: 'skill_invocations' },
          { name: 'err', measure: 'error_rate' },
        ],
      },
      `{ ${range}, requestType: SCALAR, compare: PREVIOUS_PERIOD, queries: [{ name: "n", measure: SKILL_INVOCATIONS }, { name: "err", measure: ERROR_RATE }] }`,
    );
    expect(graphql).toEqual(rest);
    expect(graphql.data.results[0]).toMatchObject({ queryName: 'n', measure: 'SKILL_INVOCATIONS', value: 40 });
  });

  it('table and time series equal REST', async () => {
    const table = await both(
      {
        ...restRange,
        request_type: 'table',
        queries: [
          { name: 'tokens', measure: 'tokens', group_by: ['harness'], order: { by: 'tokens', direction: 'asc' } },
        ],
      },
      `{ ${range}, requestType: TABLE, queries: [{ name: "tokens", measure: TOKENS, groupBy: [HARNESS], order: { by: "TOKENS", direction: ASC } }] }`,
    );
    expect(table.graphql).toEqual(table.rest);
    const series = await both(
      {
        ...restRange,
        request_type: 'time_series',
        bucket: 'day',
        queries: [{ name: 'u', measure: 'active_users', filters: [{ key: 'harness', op: 'eq', value: 'cursor' }] }],
      },
      `{ ${range}, requestType: TIME_SERIES, bucket: DAY, queries: [{ name: "u", measure: ACTIVE_USERS, filters: [{ key: HARNESS, op: EQ, value: "cursor" }] }] }`,
    );
    // REST leaves `groups` out of ungrouped series; GraphQL answers null.
    for (const one of series.graphql.data.series) expect(one.groups).toBeNull();
    const ungrouped = {
      ...series.graphql,
      data: {
        ...series.graphql.data,
        series: series.graphql.data.series.map(({ groups: _g, ...rest }: { groups: unknown }) => rest),
      },
    };
    expect(ungrouped).toEqual(series.rest);
    expect(series.graphql.data.series[0].points).toHaveLength(7);
  });

  it('refuses what REST refuses, with the same codes', async () => {
    const backwards = await gql(
      t,
      `{ skill(id: "sk-1") { traceStats(input: { startTimeUnixSeconds: ${START + DAY}, endTimeUnixSeconds: ${START}, requestType: SCALAR, queries: [{ name: "n", measure: SPANS }] }) { meta { warnings } } } }`,
    );
    expect(errorCodes(backwards)).toEqual({ 'skill.traceStats': 'validation_failed' });
    expect(backwards.errors?.[0]?.extensions.http?.status).toBe(422);
    const negative = await gql(
      t,
      `{ skill(id: "sk-1") { traceStats(input: { ${range}, requestType: TABLE, queries: [{ name: "n", measure: SPANS, limit: -1 }] }) { meta { warnings } } } }`,
    );
    expect(errorCodes(negative)).toEqual({ 'skill.traceStats': 'invalid_field' });
    expect(negative.errors?.[0]?.extensions.field).toBe('/queries/0/limit');
  });

  it('is not reachable for another org', async () => {
    const res = await gql(
      t,
      `{ skill(id: "sk-1") { traceStats(input: { ${range}, requestType: SCALAR, queries: [{ name: "n", measure: SPANS }] }) { meta { warnings } } } }`,
      undefined,
      'u-b',
      'org-b',
    );
    expect(res.data.skill).toBeNull();
    expect(errorCodes(res)).toEqual({ skill: 'not_found' });
  });
});
