/**
 * Operation 1 number by number (src/skills/trace-stats.ts): requests that mix filters, group_by,
 * orders and limits in one body, each answer compared, value by value, with what the spans say.
 * The expected answers are computed here from the generated spans (filters span by span, measures
 * from the reference, the ranking order of trace-port.ts), independently of the handler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  QueryCancelledError,
  type AggregateQuery,
  type AggregateRow,
  type SpanDimension as Dimension,
  type GroupValues,
  type Measure,
  type SpanRow,
} from '../../src/store/trace-port.ts';
import { compareGroups, compareValues } from '../../src/store/group-order.ts';
import { measure } from '../contract/trace-reference.ts';
import { expectProblem } from '../helpers/problem.ts';
import { END, startStatsApp } from '../helpers/stats-app.ts';
import type { TestApp } from '../helpers/test-app.ts';

const DAY = 86_400;
const START = END - 14 * DAY;
let t: TestApp;
let spans: SpanRow[] = [];

beforeAll(async () => {
  ({ t, spans } = await startStatsApp(11));
});
afterAll(async () => {
  await t.close();
});

interface Filter {
  key: Dimension;
  op: 'eq' | 'neq' | 'in' | 'exists' | 'not_exists';
  value?: string | number | (string | number)[];
}
interface Query {
  name: string;
  measure: Measure;
  filters?: Filter[];
  group_by?: Dimension[];
  limit?: number;
  order?: { by: string; direction: 'asc' | 'desc' };
}
type Value = number | null;

async function post(body: object, skill = 'sk-1', user = 'u-admin') {
  return t.app.inject({
    method: 'POST',
    url: `/skill/v1/skills/${skill}/traces/stats/query`,
    headers: await t.auth(user),
    payload: body,
  });
}
async function answer(body: object) {
  const res = await post(body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** A span matches a filter as DESIGN §9 says: on its own value of the dimension. */
function matches(s: SpanRow, f: Filter): boolean {
  const v = s[f.key];
  const values = f.value === undefined ? [] : Array.isArray(f.value) ? f.value : [f.value];
  switch (f.op) {
    case 'exists':
      return v !== null;
    case 'not_exists':
      return v === null;
    case 'eq':
      return v === values[0];
    case 'neq':
      return v !== values[0];
    case 'in':
      return v !== null && values.includes(v);
  }
}
/** The spans a query sees in [from, to): every span of the skill's traces there, through its filters. */
const seenBy = (q: Query, from = START, to = END) =>
  spans.filter((s) => s.start_s >= from && s.start_s < to && (q.filters ?? []).every((f) => matches(s, f)));
const groupsOf = (s: SpanRow, dims: readonly Dimension[]): GroupValues =>
  Object.fromEntries(dims.map((d) => [d, s[d]]));

/** The groups of `rows` (keyed by their JSON), each with its spans. */
function byGroup(rows: SpanRow[], dims: readonly Dimension[]) {
  const out = new Map<string, { groups: GroupValues; spans: SpanRow[] }>();
  for (const s of rows) {
    const groups = groupsOf(s, dims);
    const key = JSON.stringify(groups);
    const g = out.get(key) ?? { groups, spans: [] };
    g.spans.push(s);
    out.set(key, g);
  }
  return out;
}
/** Ranked as trace-port.ts orders groups: the value in `direction`, nulls last, then the group values. */
function ranked<T extends { groups: GroupValues; value: Value }>(
  items: T[],
  direction: 'asc' | 'desc',
  dims: readonly Dimension[],
): T[] {
  const sign = direction === 'desc' ? -1 : 1;
  return [...items].sort((a, b) => {
    const byValue =
      a.value === null || b.value === null ? compareValues(a.value, b.value) : compareValues(a.value, b.value) * sign;
    return byValue || compareGroups(a.groups, b.groups, dims);
  });
}
/** Equal numbers (sums of costs up to summation order), or both null. */
function expectValue(actual: unknown, expected: Value, what: string) {
  if (expected === null) expect(actual, what).toBeNull();
  else expect(actual, what).toBeCloseTo(expected, 9);
}

const base = { start_time_unix_seconds: START, end_time_unix_seconds: END };

describe('scalar queries with different filters in one request', () => {
  it('answers each query over the spans its own filters keep', async () => {
    const queries: Query[] = [
      { name: 'all', measure: 'traces' },
      { name: 'gpt_tokens', measure: 'tokens', filters: [{ key: 'model', op: 'eq', value: 'gpt-4o' }] },
      { name: 'gpt_spans', measure: 'spans', filters: [{ key: 'model', op: 'eq', value: 'gpt-4o' }] },
      {
        name: 'two_models',
        measure: 'tokens',
        filters: [{ key: 'model', op: 'in', value: ['gpt-4o-mini', 'claude-sonnet-4'] }],
      },
      { name: 'not_cursor', measure: 'spans', filters: [{ key: 'harness', op: 'neq', value: 'cursor' }] },
      { name: 'with_mcp', measure: 'spans', filters: [{ key: 'mcp', op: 'exists' }] },
      { name: 'without_mcp', measure: 'spans', filters: [{ key: 'mcp', op: 'not_exists' }] },
      { name: 'v2', measure: 'traces', filters: [{ key: 'skill_version', op: 'eq', value: 2 }] },
      { name: 'v1_or_3', measure: 'skill_invocations', filters: [{ key: 'skill_version', op: 'in', value: [1, 3] }] },
      { name: 'v2_errors', measure: 'error_rate', filters: [{ key: 'skill_version', op: 'eq', value: 2 }] },
      {
        name: 'review_cost',
        measure: 'cost',
        filters: [
          { key: 'command', op: 'eq', value: '/review' },
          { key: 'model', op: 'exists' },
        ],
      },
    ];
    const body = await answer({ ...base, request_type: 'scalar', queries });
    expect(body.data.results.map((r: { query_name: string }) => r.query_name)).toEqual(queries.map((q) => q.name));
    const values = queries.map((q) => measure(seenBy(q), q.measure));
    // Every filter keeps some spans and drops others: no two answers could be mistaken for each other.
    expect(new Set(values).size).toBe(values.length);
    queries.forEach((q, i) => {
      const r = body.data.results[i];
      expect(r.measure).toBe(q.measure);
      expectValue(r.value, values[i] as Value, q.name);
    });
  });
});

/** The table operation 1 must answer: rows ranked by the lead query's order, each query's values for them. */
function expectedTable(queries: Query[]) {
  const [lead] = queries as [Query];
  const dims = lead.group_by ?? [];
  const by = lead.order?.by ?? lead.name;
  const ranker = queries.find((q) => q.name === by) ?? queries.find((q) => q.measure === by);
  if (ranker === undefined) throw new Error('this helper ranks by a query');
  const candidates = [...byGroup(seenBy(ranker), dims).values()].map((g) => ({
    groups: g.groups,
    value: measure(g.spans, ranker.measure),
  }));
  const shown = ranked(candidates, lead.order?.direction ?? 'desc', dims).slice(0, lead.limit ?? 100);
  return shown.map((row) => ({
    groups: row.groups,
    values: Object.fromEntries(
      queries.map((q) => [
        q.name,
        measure(
          seenBy(q).filter((s) => JSON.stringify(groupsOf(s, dims)) === JSON.stringify(row.groups)),
          q.measure,
        ),
      ]),
    ),
  }));
}
function expectTable(actual: { groups: GroupValues; values: Record<string, Value> }[], queries: Query[]) {
  const expected = expectedTable(queries);
  expect(actual.map((r) => r.groups)).toEqual(expected.map((r) => r.groups));
  actual.forEach((row, i) => {
    expect(Object.keys(row.values).sort()).toEqual(queries.map((q) => q.name).sort());
    for (const q of queries)
      expectValue(row.values[q.name], expected[i]?.values[q.name] as Value, `${JSON.stringify(row.groups)} ${q.name}`);
  });
  return expected;
}

describe('grouped tables', () => {
  const dims: Dimension[] = ['model', 'harness'];

  it('ranks by a query of another filter set, and gives the other queries for exactly the rows shown', async () => {
    const queries: Query[] = [
      {
        name: 'review_tokens',
        measure: 'tokens',
        filters: [{ key: 'command', op: 'eq', value: '/review' }],
        group_by: dims,
        order: { by: 'all_traces', direction: 'asc' },
        limit: 4,
      },
      { name: 'all_traces', measure: 'traces', group_by: dims },
      { name: 'all_tokens', measure: 'tokens', group_by: dims },
      { name: 'plan_spans', measure: 'spans', filters: [{ key: 'command', op: 'eq', value: '/plan' }], group_by: dims },
    ];
    const body = await answer({ ...base, request_type: 'table', queries });
    expect(body.data.columns).toEqual([
      { name: 'model', column_type: 'group', unit: null },
      { name: 'harness', column_type: 'group', unit: null },
      { name: 'review_tokens', column_type: 'measure', unit: 'tokens' },
      { name: 'all_traces', column_type: 'measure', unit: 'count' },
      { name: 'all_tokens', column_type: 'measure', unit: 'tokens' },
      { name: 'plan_spans', column_type: 'measure', unit: 'count' },
    ]);
    const expected = expectTable(body.data.rows, queries);
    expect(expected).toHaveLength(4);
    // The rows are the fewest traces, not the most tokens of the first query: the two orders differ here.
    const byLead = ranked(
      [...byGroup(seenBy(queries[0] as Query), dims).values()].map((g) => ({
        groups: g.groups,
        value: measure(g.spans, 'tokens'),
      })),
      'desc',
      dims,
    ).slice(0, 4);
    expect(byLead.map((r) => r.groups)).not.toEqual(expected.map((r) => r.groups));
    expect(expected.every((r) => (r.values.review_tokens as number) > 0)).toBe(true);
    expect(body.meta).toEqual({ warnings: [] });
  });

  it('ranks by the first query in descending order by default, with the other filter sets for those rows', async () => {
    const queries: Query[] = [
      { name: 'tokens', measure: 'tokens', group_by: ['command'], limit: 2 },
      {
        name: 'slack_calls',
        measure: 'tool_calls',
        filters: [{ key: 'mcp', op: 'in', value: ['slack', 'jira'] }],
        group_by: ['command'],
      },
    ];
    const body = await answer({ ...base, request_type: 'table', queries });
    expect(expectTable(body.data.rows, queries)).toHaveLength(2);
  });

  it('answers no rows over a window without spans, whatever the filters', async () => {
    const queries: Query[] = [
      { name: 'a', measure: 'traces', group_by: ['model'], limit: 3 },
      { name: 'b', measure: 'tokens', filters: [{ key: 'model', op: 'exists' }], group_by: ['model'] },
    ];
    const body = await answer({
      start_time_unix_seconds: END + 30 * DAY,
      end_time_unix_seconds: END + 31 * DAY,
      request_type: 'table',
      queries,
    });
    expect(body.data.rows).toEqual([]);
  });
});

describe('grouped time series', () => {
  it('shows each query its own top groups by its total, a point per day', async () => {
    const from = END - 5 * DAY;
    const queries: Query[] = [
      {
        name: 'by_harness',
        measure: 'traces',
        group_by: ['harness'],
        limit: 2,
        order: { by: 'traces', direction: 'asc' },
      },
      { name: 'by_model', measure: 'tokens', group_by: ['model'], limit: 3 },
      {
        name: 'gpt_by_harness',
        measure: 'spans',
        filters: [{ key: 'model', op: 'eq', value: 'gpt-4o' }],
        group_by: ['harness'],
        limit: 1,
      },
      { name: 'all', measure: 'spans' },
    ];
    const body = await answer({
      start_time_unix_seconds: from,
      end_time_unix_seconds: END,
      request_type: 'time_series',
      queries,
    });
    const stamps = Array.from({ length: 5 }, (_, i) => from + i * DAY);
    const expected = queries.flatMap((q) => {
      const dims = q.group_by ?? [];
      const seen = seenBy(q, from, END);
      const groups = ranked(
        [...byGroup(seen, dims).values()].map((g) => ({ ...g, value: measure(g.spans, q.measure) })),
        q.order?.direction ?? 'desc',
        dims,
      ).slice(0, dims.length > 0 ? q.limit : 1);
      return groups.map((g) => ({
        query_name: q.name,
        ...(dims.length > 0 ? { groups: g.groups } : {}),
        points: stamps.map((ts) => ({
          timestamp_unix_seconds: ts,
          value: measure(
            g.spans.filter((s) => s.start_s >= ts && s.start_s < ts + DAY),
            q.measure,
          ),
        })),
      }));
    });
    expect(expected).toHaveLength(2 + 3 + 1 + 1);
    expect(
      body.data.series.map((s: { query_name: string; groups?: GroupValues; points: unknown }) => ({
        query_name: s.query_name,
        ...(s.groups !== undefined ? { groups: s.groups } : {}),
        points: s.points,
      })),
    ).toEqual(expected);
  });
});

describe('warnings', () => {
  const grouped = (name: string, limit?: number): Query => ({
    name,
    measure: 'spans',
    group_by: ['harness'],
    ...(limit !== undefined ? { limit } : {}),
  });
  const warnings = async (body: object) => (await answer(body)).meta.warnings;
  const day = { start_time_unix_seconds: END - DAY, end_time_unix_seconds: END };

  it('a time series: every grouped query with a limit over 1000 is clamped, and said so', async () => {
    expect(
      await warnings({
        ...day,
        request_type: 'time_series',
        queries: [grouped('at_max', 1000), grouped('over', 1001), { name: 'flat', measure: 'spans', limit: 5000 }],
      }),
    ).toEqual(['queries over: limit clamped to 1000']);
  });

  it('a table: only the first query limits the rows, so only its limit is clamped', async () => {
    expect(
      await warnings({ ...day, request_type: 'table', queries: [grouped('lead', 1001), grouped('other', 5000)] }),
    ).toEqual(['queries lead: limit clamped to 1000']);
    expect(
      await warnings({ ...day, request_type: 'table', queries: [grouped('lead', 3), grouped('other', 5000)] }),
    ).toEqual([]);
  });

  it('a bucket is ignored, and said so, outside time series', async () => {
    const ignored = ['bucket applies to time_series requests only and was ignored'];
    const q = { name: 'n', measure: 'spans' };
    expect(await warnings({ ...day, request_type: 'scalar', bucket: 'day', queries: [q] })).toEqual(ignored);
    expect(await warnings({ ...day, request_type: 'table', bucket: 'week', queries: [grouped('g')] })).toEqual(ignored);
    expect(await warnings({ ...day, request_type: 'time_series', bucket: 'day', queries: [q] })).toEqual([]);
    expect(await warnings({ ...day, request_type: 'scalar', bucket: null, queries: [q] })).toEqual([]);
  });
});

describe('the skill asked for', () => {
  const body = { ...base, request_type: 'scalar', queries: [{ name: 'n', measure: 'traces' }] };
  it('404 names a missing or non-skill id; 403 names the skill the caller cannot read', async () => {
    expect(expectProblem(await post(body, 'ag-1'), 404, 'not_found').detail).toBe('skill ag-1 not found');
    expect(expectProblem(await post(body, 'nope'), 404, 'not_found').detail).toBe('skill nope not found');
    expect(expectProblem(await post(body, 'sk-1', 'u-none'), 403, 'access_denied').detail).toBe(
      'no read access to skill sk-1',
    );
  });
});

/**
 * What the trace engine is asked and hands back while `fn` runs (DESIGN §12: one aggregation per
 * distinct filters and group_by, each returning only the groups the answer can show).
 */
async function engineWork(fn: () => Promise<void>) {
  const calls: { query: AggregateQuery; groups: Set<string> }[] = [];
  await withAggregate(
    (real) => async (query, signal) => {
      const rows = await real(query, signal);
      calls.push({ query, groups: new Set(rows.map((r) => JSON.stringify(r.groups))) });
      return rows;
    },
    fn,
  );
  return calls;
}
type Aggregate = (query: AggregateQuery, signal?: AbortSignal) => Promise<AggregateRow[]>;
/** Runs `fn` with the app's trace store answering aggregations through `wrap` (its own method back after). */
async function withAggregate(wrap: (real: Aggregate) => Aggregate, fn: () => Promise<void>) {
  const store = t.traces;
  store.aggregate = wrap(store.aggregate.bind(store));
  try {
    await fn();
  } finally {
    delete (store as Partial<typeof store>).aggregate;
  }
}
const keys = (groups: GroupValues[]) => new Set(groups.map((g) => JSON.stringify(g)));

describe('the work the engine is asked for', () => {
  it('a time series: one aggregation per filter set and group_by, handing back only the top groups of its queries', async () => {
    const queries: Query[] = [
      { name: 'traces', measure: 'traces', group_by: ['harness'], limit: 2 },
      { name: 'tokens', measure: 'tokens', group_by: ['harness'], limit: 1, order: { by: 'tokens', direction: 'asc' } },
      { name: 'spans', measure: 'spans' },
      { name: 'all_traces', measure: 'traces' },
    ];
    let series: { query_name: string; groups?: GroupValues }[] = [];
    const calls = await engineWork(async () => {
      series = (await answer({ ...base, request_type: 'time_series', queries })).data.series;
    });
    expect(calls.map((c) => c.query.measures)).toEqual(
      expect.arrayContaining([
        ['traces', 'tokens'],
        ['spans', 'traces'],
      ]),
    );
    expect(calls).toHaveLength(2);
    const shown = keys(series.filter((s) => s.groups !== undefined).map((s) => s.groups as GroupValues));
    const harnesses = new Set(seenBy(queries[0] as Query).map((s) => s.harness));
    expect(shown.size).toBeLessThan(harnesses.size);
    expect(calls.find((c) => c.query.groupBy.length > 0)?.groups).toEqual(shown);
  });

  it('a table: the ranking query first, then the other filter sets for exactly the rows shown', async () => {
    const dims: Dimension[] = ['model', 'harness'];
    const queries: Query[] = [
      { name: 'lead', measure: 'spans', group_by: dims, order: { by: 'traces', direction: 'desc' }, limit: 3 },
      { name: 'traces', measure: 'traces', filters: [{ key: 'harness', op: 'neq', value: 'cursor' }], group_by: dims },
      { name: 'tokens', measure: 'tokens', filters: [{ key: 'command', op: 'eq', value: '/ask' }], group_by: dims },
    ];
    let rows: { groups: GroupValues }[] = [];
    const calls = await engineWork(async () => {
      rows = (await answer({ ...base, request_type: 'table', queries })).data.rows;
    });
    expectTable(rows as never, queries);
    expect(calls).toHaveLength(3);
    expect(calls[0]?.query.measures).toEqual(['traces']);
    const shown = keys(rows.map((r) => r.groups));
    expect(shown.size).toBe(3);
    for (const c of calls)
      expect(
        [...c.groups].every((g) => shown.has(g)),
        JSON.stringify(c.query.measures),
      ).toBe(true);
  });

  it('a table whose ranking finds no rows asks for nothing more', async () => {
    const queries: Query[] = [
      { name: 'a', measure: 'traces', group_by: ['model'], limit: 3 },
      { name: 'b', measure: 'tokens', filters: [{ key: 'model', op: 'exists' }], group_by: ['model'] },
    ];
    const calls = await engineWork(async () => {
      const body = await answer({
        start_time_unix_seconds: END + 30 * DAY,
        end_time_unix_seconds: END + 31 * DAY,
        request_type: 'table',
        queries,
      });
      expect(body.data.rows).toEqual([]);
    });
    expect(calls.map((c) => c.query.measures)).toEqual([['traces']]);
  });

  it('a query the engine cancels (the deadline) answers 504 naming the statistics query', async () => {
    await withAggregate(
      () => () => Promise.reject(new QueryCancelledError()),
      async () => {
        const res = await post({ ...base, request_type: 'scalar', queries: [{ name: 'n', measure: 'traces' }] });
        expect(expectProblem(res, 504, 'request_timeout').detail).toBe(
          'the statistics query ran past the request deadline',
        );
      },
    );
  });
});
