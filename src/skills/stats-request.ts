/**
 * TraceStatsRequest of the specification: its JSON Schema (types, enums, ranges: checked by the
 * REST validation layer) and the cross-field rules of DESIGN §9 (checked here, all at once, as one
 * 422 validation_failed listing every broken rule with its JSON pointer).
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { ApiError, type FieldError } from '../errors.ts';
import { DIMENSIONS, MEASURES, bucketStart } from '../store/trace-port.ts';
import { EVALUATION_MEASURES } from '../store/evaluation-row.ts';

const MAX_QUERIES = 20;
const MAX_GROUP_BY = 3;
const MAX_RANGE_S = 366 * 86400;
const DEFAULT_GROUP_LIMIT = 100;
export const MAX_GROUP_LIMIT = 1000;

const scalarValue = { type: ['string', 'number', 'boolean'] } as const;

export const traceStatsRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['start_time_unix_seconds', 'end_time_unix_seconds', 'request_type', 'queries'],
  properties: {
    start_time_unix_seconds: { type: 'integer', minimum: 0, maximum: 253402300799 },
    end_time_unix_seconds: { type: 'integer', minimum: 0, maximum: 253402300799 },
    request_type: { type: 'string', enum: ['scalar', 'table', 'time_series'] },
    queries: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_QUERIES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'measure'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          measure: { type: 'string', enum: MEASURES },
          filters: {
            type: 'array',
            maxItems: 20,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['key', 'op'],
              properties: {
                key: { type: 'string', enum: DIMENSIONS },
                op: { type: 'string', enum: ['eq', 'neq', 'in', 'exists', 'not_exists'] },
                value: { anyOf: [scalarValue, { type: 'array', maxItems: 1000, items: scalarValue }] },
              },
            },
          },
          group_by: { type: 'array', items: { type: 'string', enum: DIMENSIONS } },
          limit: { type: ['integer', 'null'], minimum: 0, maximum: 2147483647 },
          order: {
            type: ['object', 'null'],
            additionalProperties: false,
            required: ['by', 'direction'],
            properties: { by: { type: 'string', minLength: 1 }, direction: { type: 'string', enum: ['asc', 'desc'] } },
          },
        },
      },
    },
    bucket: { type: ['string', 'null'], enum: ['day', 'week', null] },
    compare: { type: ['string', 'null'], enum: ['none', 'previous_period', null] },
    workspace_id: { type: ['string', 'null'], minLength: 1, maxLength: 200 },
  },
} as const satisfies JSONSchema;

/** The request as its schema admits it (after validation): the one declaration of its shape. */
export type TraceStatsRequest = FromSchema<typeof traceStatsRequestSchema>;
export type PanelQuery = TraceStatsRequest['queries'][number];

/** Every cross-field rule of DESIGN §9; throws one validation_failed naming each broken rule. */
export function checkRules(req: TraceStatsRequest): void {
  const errors: FieldError[] = [];
  const fail = (field: string, detail: string) => errors.push({ field, detail });
  const span = req.end_time_unix_seconds - req.start_time_unix_seconds;
  if (span <= 0) fail('/end_time_unix_seconds', 'end_time_unix_seconds must be after start_time_unix_seconds');
  else if (span > MAX_RANGE_S) fail('/end_time_unix_seconds', 'the time range may span at most 366 days');

  const names = new Set<string>();
  const firstGroupBy = JSON.stringify(req.queries[0]?.group_by ?? []);
  req.queries.forEach((q, i) => {
    const at = `/queries/${i}`;
    if (names.has(q.name)) fail(`${at}/name`, `query name ${q.name} is used twice`);
    names.add(q.name);
    const groupBy = q.group_by ?? [];
    if (groupBy.length > MAX_GROUP_BY) fail(`${at}/group_by`, `at most ${MAX_GROUP_BY} group_by dimensions`);
    if (new Set(groupBy).size !== groupBy.length) fail(`${at}/group_by`, 'group_by dimensions must be distinct');
    if (req.request_type === 'scalar' && groupBy.length > 0) fail(`${at}/group_by`, 'scalar queries take no group_by');
    if (req.request_type === 'table' && JSON.stringify(groupBy) !== firstGroupBy)
      fail(`${at}/group_by`, 'every query of a table must share the same group_by');
    checkEvaluationDimension(q, at, fail);
    (q.filters ?? []).forEach((f, j) => {
      const fat = `${at}/filters/${j}/value`;
      const v = f.value;
      if (f.op === 'exists' || f.op === 'not_exists') {
        if (v !== undefined) fail(fat, `${f.op} takes no value`);
      } else if (f.op === 'in') {
        if (!Array.isArray(v)) fail(fat, 'in needs an array value');
      } else if (v === undefined || Array.isArray(v)) {
        fail(fat, `${f.op} needs a single value`);
      }
      const values = v === undefined ? [] : Array.isArray(v) ? v : [v];
      const integer = (x: unknown) =>
        (typeof x === 'number' || (typeof x === 'string' && x.trim() !== '')) && Number.isSafeInteger(Number(x));
      if (f.key === 'skill_version' && !values.every(integer)) {
        fail(fat, 'skill_version values must be integers');
      }
    });
    if (q.order) {
      const by = q.order.by;
      const isMeasure = (MEASURES as readonly string[]).includes(by);
      const isQuery = names.has(by) || req.queries.some((o) => o.name === by);
      if (req.request_type === 'table') {
        // A table ranks its rows by a query's value or a group value: a measure no query computes has no value to rank by.
        const computed = req.queries.some((o) => o.measure === by);
        const dims: readonly string[] = groupBy;
        if (!isQuery && !computed && !dims.includes(by)) {
          fail(
            `${at}/order/by`,
            isMeasure
              ? `order.by ${by} is a measure no query of this table computes`
              : 'order.by must name a query, a measure a query computes, or a group_by dimension',
          );
        }
      } else if (req.request_type === 'time_series') {
        // Each series ranks its groups by its own values.
        if (by !== q.name && by !== q.measure) {
          fail(`${at}/order/by`, `order.by of a time series ranks its own values: ${q.name} or ${q.measure}`);
        }
      } else if (!isMeasure && !isQuery) {
        fail(`${at}/order/by`, 'order.by must name a measure or a query');
      }
    }
  });
  if (errors.length > 0) throw new ApiError('validation_failed', errors.map((e) => e.detail).join('; '), { errors });
}

/**
 * Spans have no evaluation name: the dimension `evaluation` groups and filters the evaluation
 * measures only (store/stats/evaluations.ts).
 */
function checkEvaluationDimension(q: PanelQuery, at: string, fail: (field: string, detail: string) => void): void {
  if ((EVALUATION_MEASURES as readonly string[]).includes(q.measure)) return;
  const detail = `the dimension evaluation groups and filters only the measures ${EVALUATION_MEASURES.join(' and ')}, not ${q.measure}`;
  if ((q.group_by ?? []).includes('evaluation')) fail(`${at}/group_by`, detail);
  (q.filters ?? []).forEach((f, j) => {
    if (f.key === 'evaluation') fail(`${at}/filters/${j}/key`, detail);
  });
}

/** The bucket of a time series: as asked, else days up to 92 days and weeks beyond (DESIGN §9). */
export function bucketOf(req: TraceStatsRequest): 'day' | 'week' {
  return req.bucket ?? (req.end_time_unix_seconds - req.start_time_unix_seconds <= 92 * 86400 ? 'day' : 'week');
}

/** The buckets of a time series over `[start, end)`: the start of each, in order. */
export function bucketStarts(startS: number, endS: number, bucket: 'day' | 'week'): number[] {
  const step = bucket === 'day' ? 86400 : 7 * 86400;
  const stamps: number[] = [];
  for (let t = bucketStart(startS, bucket); t < endS; t += step) stamps.push(t);
  return stamps;
}

/** The groups a query may show: its limit (default 100, at most 1000) when grouped, else one. */
export function groupLimitOf(q: PanelQuery): number {
  if ((q.group_by ?? []).length === 0) return 1;
  return Math.min(q.limit ?? DEFAULT_GROUP_LIMIT, MAX_GROUP_LIMIT);
}

/** The groups a query is priced at: its limit, and one for `limit: 0` (which shows none but still runs). */
const pricedGroups = (q: PanelQuery) => Math.max(1, groupLimitOf(q));

/**
 * The size of the answer before any work (DESIGN §12): values it may hold, as queries × groups ×
 * buckets, doubled by `compare`. Groups count at their limit, so the bound holds whatever the data;
 * a query counts at least one group (`limit: 0` shows none, but its aggregation still runs). The
 * request must have passed the schema (ranges already checked).
 */
export function answerPoints(req: TraceStatsRequest): number {
  const span = req.end_time_unix_seconds - req.start_time_unix_seconds;
  const buckets =
    req.request_type !== 'time_series' || span <= 0
      ? 1
      : bucketStarts(
          req.start_time_unix_seconds,
          Math.min(req.end_time_unix_seconds, req.start_time_unix_seconds + MAX_RANGE_S),
          bucketOf(req),
        ).length;
  const lead = req.queries[0];
  const points =
    req.request_type === 'table'
      ? lead === undefined
        ? 0
        : pricedGroups(lead) * req.queries.length
      : req.queries.reduce((sum, q) => sum + (req.request_type === 'scalar' ? 1 : pricedGroups(q) * buckets), 0);
  return points * (req.compare === 'previous_period' ? 2 : 1);
}

/** Whole weeks a range of `spanS` seconds touches. */
const weeksOf = (spanS: number) => Math.ceil(spanS / (7 * 86400));

/**
 * What a request costs the trace engine, whatever the size of its answer: its aggregations (at
 * most one per query, twice with `compare`), each weighted by the whole weeks its range spans plus
 * one. The largest request the schema admits costs MAX_STATS_WORK (20 × 2 × 54 = 2,160); a 7-day
 * scalar of three queries costs 6. Values not yet validated count as the least they can.
 */
export function statsWork(req: TraceStatsRequest): number {
  const span = req.end_time_unix_seconds - req.start_time_unix_seconds;
  const queries = Math.min(Array.isArray(req.queries) ? req.queries.length : 0, MAX_QUERIES);
  return queries * (req.compare === 'previous_period' ? 2 : 1) * (Number.isFinite(span) ? rangeWork(span) : 1);
}

/**
 * The work of one pass over a range of `spanS` seconds: its whole weeks plus one, a range longer
 * than the longest the statistics admit (366 days) counting as that one, an empty one as 1.
 */
export function rangeWork(spanS: number): number {
  return weeksOf(Math.min(Math.max(spanS, 0), MAX_RANGE_S)) + 1;
}

/** `statsWork` of the largest request the schema admits: every query, compared, over the longest range. */
export const MAX_STATS_WORK = MAX_QUERIES * 2 * (weeksOf(MAX_RANGE_S) + 1);

/** Refuses a request whose answer could exceed `maxPoints`, naming the fields that make it large. */
export function checkAnswerSize(req: TraceStatsRequest, maxPoints: number): void {
  const points = answerPoints(req);
  if (points <= maxPoints) return;
  const detail = `the answer could hold ${points.toLocaleString('en-US')} values (queries × groups × buckets${req.compare === 'previous_period' ? ' × 2 for compare' : ''}), over the limit of ${maxPoints.toLocaleString('en-US')}: ask for fewer queries, lower limits, a shorter range or week buckets`;
  const fields = [
    '/queries',
    ...(req.request_type === 'time_series' ? ['/end_time_unix_seconds', '/bucket'] : []),
    ...(req.compare === 'previous_period' ? ['/compare'] : []),
  ];
  throw new ApiError('validation_failed', detail, { errors: fields.map((field) => ({ field, detail })) });
}
