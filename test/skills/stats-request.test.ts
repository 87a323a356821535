/**
 * The cross-field rules of a TraceStatsRequest (DESIGN §9) and the answer-size bound (DESIGN §12),
 * checked on the functions themselves: each broken rule is named with its JSON pointer and its
 * sentence, each valid request passes, and the size of an answer is counted before any work.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, type FieldError } from '../../src/errors.ts';
import {
  answerPoints,
  bucketOf,
  bucketStarts,
  checkAnswerSize,
  checkRules,
  groupLimitOf,
  statsWork,
  type TraceStatsRequest,
} from '../../src/skills/stats-request.ts';

const DAY = 86400;
const START = Date.UTC(2026, 8, 1) / 1000; // a Tuesday
type Query = TraceStatsRequest['queries'][number];

function req(over: Partial<TraceStatsRequest> & { queries?: Query[] } = {}): TraceStatsRequest {
  return {
    start_time_unix_seconds: START,
    end_time_unix_seconds: START + 7 * DAY,
    request_type: 'scalar',
    queries: [{ name: 'q', measure: 'spans' }],
    ...over,
  };
}

/** The field errors a request breaks, in order; `[]` when it passes. */
function broken(r: TraceStatsRequest): FieldError[] {
  try {
    checkRules(r);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.code).toBe('validation_failed');
    const errors = e.extras.errors ?? [];
    expect(e.detail).toBe(errors.map((x) => x.detail).join('; '));
    return errors;
  }
}

const f = (field: string, detail: string): FieldError => ({ field, detail });

describe('checkRules: every broken rule is named, with its pointer and sentence', () => {
  const cases: [string, TraceStatsRequest, FieldError[]][] = [
    ['a valid scalar request', req(), []],
    ['no queries (refused by the schema before the rules)', req({ queries: [] }), []],
    [
      'a table none of whose queries groups',
      req({
        request_type: 'table',
        queries: [
          { name: 'a', measure: 'spans' },
          { name: 'b', measure: 'traces', group_by: [] },
        ],
      }),
      [],
    ],
    [
      'an empty range',
      req({ end_time_unix_seconds: START }),
      [f('/end_time_unix_seconds', 'end_time_unix_seconds must be after start_time_unix_seconds')],
    ],
    [
      'a reversed range',
      req({ end_time_unix_seconds: START - 1 }),
      [f('/end_time_unix_seconds', 'end_time_unix_seconds must be after start_time_unix_seconds')],
    ],
    ['a one-second range', req({ end_time_unix_seconds: START + 1 }), []],
    ['exactly 366 days', req({ end_time_unix_seconds: START + 366 * DAY }), []],
    [
      '366 days and a second',
      req({ end_time_unix_seconds: START + 366 * DAY + 1 }),
      [f('/end_time_unix_seconds', 'the time range may span at most 366 days')],
    ],
    [
      'a name used twice',
      req({
        queries: [
          { name: 'a', measure: 'spans' },
          { name: 'a', measure: 'traces' },
        ],
      }),
      [f('/queries/1/name', 'query name a is used twice')],
    ],
    [
      'three group_by dimensions',
      req({ request_type: 'table', queries: [{ name: 'a', measure: 'spans', group_by: ['model', 'tool', 'user'] }] }),
      [],
    ],
    [
      'four group_by dimensions',
      req({
        request_type: 'table',
        queries: [{ name: 'a', measure: 'spans', group_by: ['model', 'tool', 'user', 'harness'] }],
      }),
      [f('/queries/0/group_by', 'at most 3 group_by dimensions')],
    ],
    [
      'a dimension twice',
      req({ request_type: 'table', queries: [{ name: 'a', measure: 'spans', group_by: ['model', 'model'] }] }),
      [f('/queries/0/group_by', 'group_by dimensions must be distinct')],
    ],
    [
      'group_by on a scalar',
      req({ queries: [{ name: 'a', measure: 'spans', group_by: ['model'] }] }),
      [f('/queries/0/group_by', 'scalar queries take no group_by')],
    ],
    ['an empty group_by on a scalar', req({ queries: [{ name: 'a', measure: 'spans', group_by: [] }] }), []],
    [
      'a table whose queries group differently',
      req({
        request_type: 'table',
        queries: [
          { name: 'a', measure: 'spans', group_by: ['model'] },
          { name: 'b', measure: 'traces', group_by: ['tool'] },
          { name: 'c', measure: 'traces' },
        ],
      }),
      [
        f('/queries/1/group_by', 'every query of a table must share the same group_by'),
        f('/queries/2/group_by', 'every query of a table must share the same group_by'),
      ],
    ],
    [
      'a table whose first query has no group_by and the second one',
      req({
        request_type: 'table',
        queries: [
          { name: 'a', measure: 'spans' },
          { name: 'b', measure: 'traces', group_by: ['tool'] },
        ],
      }),
      [f('/queries/1/group_by', 'every query of a table must share the same group_by')],
    ],
    [
      'a time series whose queries group differently (allowed)',
      req({
        request_type: 'time_series',
        queries: [
          { name: 'a', measure: 'spans', group_by: ['model'] },
          { name: 'b', measure: 'traces' },
        ],
      }),
      [],
    ],
    [
      'exists and not_exists with a value',
      req({
        queries: [
          {
            name: 'a',
            measure: 'spans',
            filters: [
              { key: 'model', op: 'exists', value: 'x' },
              { key: 'tool', op: 'not_exists', value: ['x'] },
              { key: 'tool', op: 'exists' },
              { key: 'tool', op: 'not_exists' },
            ],
          },
        ],
      }),
      [
        f('/queries/0/filters/0/value', 'exists takes no value'),
        f('/queries/0/filters/1/value', 'not_exists takes no value'),
      ],
    ],
    [
      'in without an array',
      req({
        queries: [
          {
            name: 'a',
            measure: 'spans',
            filters: [
              { key: 'model', op: 'in', value: 'x' },
              { key: 'model', op: 'in' },
              { key: 'model', op: 'in', value: ['x', 'y'] },
              { key: 'model', op: 'in', value: [] },
            ],
          },
        ],
      }),
      [
        f('/queries/0/filters/0/value', 'in needs an array value'),
        f('/queries/0/filters/1/value', 'in needs an array value'),
      ],
    ],
    [
      'eq and neq without a single value',
      req({
        queries: [
          {
            name: 'a',
            measure: 'spans',
            filters: [
              { key: 'model', op: 'eq' },
              { key: 'model', op: 'neq', value: ['x'] },
              { key: 'model', op: 'eq', value: 'x' },
              { key: 'model', op: 'neq', value: false },
            ],
          },
        ],
      }),
      [
        f('/queries/0/filters/0/value', 'eq needs a single value'),
        f('/queries/0/filters/1/value', 'neq needs a single value'),
      ],
    ],
    [
      'skill_version values that are not integers',
      req({
        queries: [
          {
            name: 'a',
            measure: 'spans',
            filters: [
              { key: 'skill_version', op: 'eq', value: '1.5' },
              { key: 'skill_version', op: 'in', value: [1, 'x'] },
              { key: 'skill_version', op: 'eq', value: true },
              { key: 'skill_version', op: 'in', value: [1, '2', 3] },
              { key: 'skill_version', op: 'eq', value: '7' },
              { key: 'skill_version', op: 'exists' },
              { key: 'model', op: 'eq', value: '1.5' },
              // Number('') and Number(' ') are 0: empty text is no integer.
              { key: 'skill_version', op: 'eq', value: '' },
              { key: 'skill_version', op: 'in', value: [1, ' '] },
            ],
          },
        ],
      }),
      [
        f('/queries/0/filters/0/value', 'skill_version values must be integers'),
        f('/queries/0/filters/1/value', 'skill_version values must be integers'),
        f('/queries/0/filters/2/value', 'skill_version values must be integers'),
        f('/queries/0/filters/7/value', 'skill_version values must be integers'),
        f('/queries/0/filters/8/value', 'skill_version values must be integers'),
      ],
    ],
    [
      'a scalar ordered by a measure or a query (allowed)',
      req({
        queries: [
          { name: 'a', measure: 'spans', order: { by: 'tokens', direction: 'asc' } },
          { name: 'b', measure: 'traces', order: { by: 'a', direction: 'desc' } },
          { name: 'c', measure: 'traces', order: { by: 'd', direction: 'desc' } },
          { name: 'd', measure: 'traces' },
        ],
      }),
      [],
    ],
    [
      'a scalar ordered by neither',
      req({ queries: [{ name: 'a', measure: 'spans', order: { by: 'model', direction: 'asc' } }] }),
      [f('/queries/0/order/by', 'order.by must name a measure or a query')],
    ],
    [
      'a table ordered by a query, a computed measure, a group dimension (allowed)',
      req({
        request_type: 'table',
        queries: [
          { name: 'a', measure: 'spans', group_by: ['model'], order: { by: 'b', direction: 'asc' } },
          { name: 'b', measure: 'traces', group_by: ['model'], order: { by: 'spans', direction: 'asc' } },
          { name: 'c', measure: 'tokens', group_by: ['model'], order: { by: 'model', direction: 'asc' } },
        ],
      }),
      [],
    ],
    [
      'a table ordered by a measure no query computes',
      req({
        request_type: 'table',
        queries: [{ name: 'a', measure: 'spans', group_by: ['model'], order: { by: 'tokens', direction: 'asc' } }],
      }),
      [f('/queries/0/order/by', 'order.by tokens is a measure no query of this table computes')],
    ],
    [
      'a table ordered by something else',
      req({
        request_type: 'table',
        queries: [{ name: 'a', measure: 'spans', group_by: ['model'], order: { by: 'tool', direction: 'asc' } }],
      }),
      [f('/queries/0/order/by', 'order.by must name a query, a measure a query computes, or a group_by dimension')],
    ],
    [
      'a time series ordered by its own name or measure (allowed)',
      req({
        request_type: 'time_series',
        queries: [
          { name: 'a', measure: 'spans', group_by: ['model'], order: { by: 'a', direction: 'asc' } },
          { name: 'b', measure: 'traces', group_by: ['model'], order: { by: 'traces', direction: 'asc' } },
        ],
      }),
      [],
    ],
    [
      'a time series ordered by another query',
      req({
        request_type: 'time_series',
        queries: [
          { name: 'a', measure: 'spans', group_by: ['model'], order: { by: 'b', direction: 'asc' } },
          { name: 'b', measure: 'traces', group_by: ['model'] },
        ],
      }),
      [f('/queries/0/order/by', 'order.by of a time series ranks its own values: a or spans')],
    ],
    [
      'the evaluation dimension with evaluation measures, grouped and filtered',
      req({
        request_type: 'table',
        queries: [
          { name: 'a', measure: 'evaluation_score', group_by: ['evaluation', 'model'] },
          {
            name: 'b',
            measure: 'evaluation_pass_rate',
            group_by: ['evaluation', 'model'],
            filters: [{ key: 'evaluation', op: 'eq', value: 'relevance' }],
          },
        ],
      }),
      [],
    ],
    [
      'the evaluation dimension with other measures (spans have no evaluation name)',
      req({
        request_type: 'table',
        queries: [
          { name: 'a', measure: 'evaluation_score', group_by: ['evaluation'] },
          {
            name: 'b',
            measure: 'spans',
            group_by: ['evaluation'],
            filters: [
              { key: 'model', op: 'exists' },
              { key: 'evaluation', op: 'in', value: ['relevance'] },
            ],
          },
        ],
      }),
      [
        f(
          '/queries/1/group_by',
          'the dimension evaluation groups and filters only the measures evaluation_score and evaluation_pass_rate, not spans',
        ),
        f(
          '/queries/1/filters/1/key',
          'the dimension evaluation groups and filters only the measures evaluation_score and evaluation_pass_rate, not spans',
        ),
      ],
    ],
    [
      'several broken rules at once',
      req({
        end_time_unix_seconds: START,
        queries: [
          { name: 'a', measure: 'spans', group_by: ['model'] },
          { name: 'a', measure: 'spans' },
        ],
      }),
      [
        f('/end_time_unix_seconds', 'end_time_unix_seconds must be after start_time_unix_seconds'),
        f('/queries/0/group_by', 'scalar queries take no group_by'),
        f('/queries/1/name', 'query name a is used twice'),
      ],
    ],
  ];
  for (const [name, request, want] of cases) {
    it(name, () => {
      expect(broken(request)).toEqual(want);
    });
  }
});

describe('buckets', () => {
  it('days up to 92 days, weeks beyond, the asked bucket always', () => {
    expect(bucketOf(req({ end_time_unix_seconds: START + 92 * DAY }))).toBe('day');
    expect(bucketOf(req({ end_time_unix_seconds: START + 92 * DAY + 1 }))).toBe('week');
    expect(bucketOf(req({ end_time_unix_seconds: START + DAY, bucket: 'week' }))).toBe('week');
    expect(bucketOf(req({ end_time_unix_seconds: START + 200 * DAY, bucket: 'day' }))).toBe('day');
  });

  it('bucket starts cover [start, end) from the bucket holding start', () => {
    expect(bucketStarts(START + 3600, START + 3 * DAY, 'day')).toEqual([START, START + DAY, START + 2 * DAY]);
    expect(bucketStarts(START, START + 2 * DAY + 1, 'day')).toEqual([START, START + DAY, START + 2 * DAY]);
    const monday = START - DAY; // weeks start on Monday
    expect(bucketStarts(START, START + 8 * DAY, 'week')).toEqual([monday, monday + 7 * DAY]);
    expect(bucketStarts(START, START, 'day')).toEqual([]);
  });
});

describe('answer size, counted before any work (DESIGN §12)', () => {
  it('a query shows one group ungrouped, else its limit (default 100, at most 1000)', () => {
    expect(groupLimitOf({ name: 'a', measure: 'spans', limit: 5 })).toBe(1);
    expect(groupLimitOf({ name: 'a', measure: 'spans', group_by: [] })).toBe(1);
    expect(groupLimitOf({ name: 'a', measure: 'spans', group_by: ['model'] })).toBe(100);
    expect(groupLimitOf({ name: 'a', measure: 'spans', group_by: ['model'], limit: null })).toBe(100);
    expect(groupLimitOf({ name: 'a', measure: 'spans', group_by: ['model'], limit: 7 })).toBe(7);
    expect(groupLimitOf({ name: 'a', measure: 'spans', group_by: ['model'], limit: 5000 })).toBe(1000);
  });

  const grouped = (name: string, limit: number): Query => ({ name, measure: 'spans', group_by: ['model'], limit });

  it('scalar: one value per query; compare doubles', () => {
    const two = [
      { name: 'a', measure: 'spans' },
      { name: 'b', measure: 'traces' },
    ] satisfies Query[];
    expect(answerPoints(req({ queries: two }))).toBe(2);
    expect(answerPoints(req({ queries: two, compare: 'previous_period' }))).toBe(4);
    expect(answerPoints(req({ queries: two, compare: 'none' }))).toBe(2);
    // One value per query whatever else it says (its group_by is refused by the rules, not counted here).
    const grouped: Query = { name: 'a', measure: 'spans', group_by: ['model'], limit: 500 };
    expect(answerPoints(req({ queries: [grouped] }))).toBe(1);
    expect(answerPoints(req({ queries: [grouped], end_time_unix_seconds: START + 30 * DAY }))).toBe(1);
  });

  it('table: the lead query groups × queries', () => {
    expect(answerPoints(req({ request_type: 'table', queries: [grouped('a', 10), grouped('b', 999)] }))).toBe(20);
    expect(answerPoints(req({ request_type: 'table', queries: [] }))).toBe(0);
  });

  it('time series: groups × buckets per query, over the range cut at 366 days', () => {
    const week = req({ request_type: 'time_series', queries: [grouped('a', 10), grouped('b', 3)] });
    expect(answerPoints(week)).toBe(7 * 13);
    expect(answerPoints({ ...week, compare: 'previous_period' })).toBe(2 * 7 * 13);
    const tooLong = req({
      request_type: 'time_series',
      bucket: 'day',
      end_time_unix_seconds: START + 5000 * DAY,
      queries: [grouped('a', 1)],
    });
    expect(answerPoints(tooLong)).toBe(366);
    expect(answerPoints({ ...tooLong, end_time_unix_seconds: START })).toBe(1);
    expect(answerPoints({ ...tooLong, end_time_unix_seconds: START - DAY })).toBe(1);
  });

  it('a grouped query with limit 0 still counts one group: its aggregation runs (it counted 0 before)', () => {
    const none = (name: string): Query => ({ name, measure: 'spans', group_by: ['user'], limit: 0 });
    const twenty = Array.from({ length: 20 }, (_, i) => none(`q${i}`));
    const series = req({ request_type: 'time_series', bucket: 'week', queries: twenty, compare: 'previous_period' });
    expect(answerPoints({ ...series, end_time_unix_seconds: START + 366 * DAY })).toBe(20 * 53 * 2);
    expect(answerPoints(req({ request_type: 'table', queries: twenty }))).toBe(20);
  });

  it('statsWork: aggregations (one per query, two with compare) × (whole weeks of the range + 1)', () => {
    const three = [
      { name: 'a', measure: 'spans' },
      { name: 'b', measure: 'traces' },
      { name: 'c', measure: 'error_rate' },
    ] satisfies Query[];
    expect(statsWork(req({ queries: three }))).toBe(3 * 2);
    expect(statsWork(req({ queries: three, compare: 'previous_period' }))).toBe(3 * 2 * 2);
    const year = req({ queries: three, end_time_unix_seconds: START + 366 * DAY });
    expect(statsWork(year)).toBe(3 * 54);
    // Cut at the 366 days the schema admits, and at zero for a reversed range.
    expect(statsWork({ ...year, end_time_unix_seconds: START + 5000 * DAY })).toBe(3 * 54);
    expect(statsWork({ ...year, end_time_unix_seconds: START - DAY })).toBe(3);
    expect(statsWork({ ...year, end_time_unix_seconds: Number.NaN })).toBe(3);
  });

  it('refuses an answer over the limit, naming what makes it large', () => {
    const series = req({ request_type: 'time_series', queries: [grouped('a', 10)] });
    expect(() => {
      checkAnswerSize(series, 70);
    }).not.toThrow();
    const refusal = (r: TraceStatsRequest, max: number): ApiError => {
      try {
        checkAnswerSize(r, max);
      } catch (err) {
        return err as ApiError;
      }
      throw new Error('not refused');
    };
    const e = refusal(series, 69);
    expect(e.code).toBe('validation_failed');
    expect(e.detail).toBe(
      'the answer could hold 70 values (queries × groups × buckets), over the limit of 69: ask for fewer queries, lower limits, a shorter range or week buckets',
    );
    expect(e.extras.errors?.map((x) => x.field)).toEqual(['/queries', '/end_time_unix_seconds', '/bucket']);
    const compared = refusal({ ...series, compare: 'previous_period' }, 100);
    expect(compared.detail).toContain('140 values (queries × groups × buckets × 2 for compare), over the limit of 100');
    expect(compared.extras.errors?.map((x) => x.field)).toEqual([
      '/queries',
      '/end_time_unix_seconds',
      '/bucket',
      '/compare',
    ]);
    const scalar = refusal(req({ queries: [{ name: 'a', measure: 'spans' }] }), 0);
    expect(scalar.extras.errors?.map((x) => x.field)).toEqual(['/queries']);
    expect(refusal(req({ request_type: 'table', queries: [grouped('a', 2000)] }), 999).detail).toContain(
      'could hold 1,000 values',
    );
  });
});
