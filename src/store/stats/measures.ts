/**
 * The statistics compiler's measure catalogue. Each measure of an AggregateQuery is computed from
 * "parts": additive ones (counts and sums), distinct counts, percentiles, the harness measures
 * summed from metric points (harness-metrics.ts) and the evaluation measures' counts and sums over
 * evaluations (evaluations.ts). Here: the parts of each measure, a part's SQL
 * over the source rows (its column p_<part>), and a measure from its parts. Part names are
 * identifiers of the compiled SQL from this whitelist, never text of a request.
 */
import { HARNESS_MEASURES, type HarnessMeasure, type Measure } from '../trace-port.ts';
import type { SqlDialect } from './dialect.ts';

export const INVOCATION = 'is_invocation';

export type Part =
  | 'spans'
  | 'inv'
  | 'err'
  | 'tool'
  | 'tokens'
  | 'cache_read'
  | 'cache_creation'
  | 'cost'
  | 'traces'
  | 'sessions'
  | 'users'
  | 'p50'
  | 'p90'
  | 'p99'
  | HarnessMeasure
  | EvaluationPart;

/**
 * The parts of the evaluation measures (evaluations.ts): evaluations with a score, the sum of their
 * scores, evaluations with a verdict, those that passed.
 */
const EVALUATION_PARTS = ['eval_scored', 'eval_sum', 'eval_judged', 'eval_passed'] as const;
export type EvaluationPart = (typeof EVALUATION_PARTS)[number];

export const PARTS: Record<Measure, Part[]> = {
  sessions: ['sessions'],
  traces: ['traces'],
  spans: ['spans'],
  skill_invocations: ['inv'],
  tool_calls: ['tool'],
  tokens: ['tokens'],
  cache_read_tokens: ['cache_read'],
  cache_creation_tokens: ['cache_creation'],
  active_users: ['users'],
  error_rate: ['inv', 'err'],
  success_rate: ['inv', 'err'],
  tokens_per_trace: ['tokens', 'traces'],
  cost: ['cost'],
  latency_p50: ['p50'],
  latency_p90: ['p90'],
  latency_p99: ['p99'],
  lines_added: ['lines_added'],
  lines_removed: ['lines_removed'],
  commits: ['commits'],
  pull_requests: ['pull_requests'],
  active_time: ['active_time'],
  evaluation_score: ['eval_scored', 'eval_sum'],
  evaluation_pass_rate: ['eval_judged', 'eval_passed'],
};
/** Parts summed from the metric points of the groups' sessions (harness-metrics.ts), not from span rows. */
export const isMetricPart = (p: Part): p is HarnessMeasure => (HARNESS_MEASURES as readonly Part[]).includes(p);
/** Parts counted from the evaluations of the groups' traces (evaluations.ts), not from span rows. */
export const isEvaluationPart = (p: Part): p is EvaluationPart => (EVALUATION_PARTS as readonly Part[]).includes(p);
/** Parts that come from rows joined to the span rows' groups rather than from the span rows. */
export const isJoinedPart = (p: Part): boolean => isMetricPart(p) || isEvaluationPart(p);
export const ADDITIVE = new Set<Part>([
  'spans',
  'inv',
  'err',
  'tool',
  'tokens',
  'cache_read',
  'cache_creation',
  'cost',
]);
/** The source columns a part reads besides BASE_COLUMNS (row-source.ts), which every aggregation keeps. */
export const PART_COLUMNS: Partial<Record<Part, string>> = {
  cache_read: 'cache_read_tokens',
  cache_creation: 'cache_creation_tokens',
};
export const DISTINCT = new Set<Part>(['traces', 'sessions', 'users']);
export const QUANTILE: Partial<Record<Part, number>> = { p50: 0.5, p90: 0.9, p99: 0.99 };

const SUMMED_PARTS = ['spans', 'inv', 'err', 'tool', 'tokens', 'traces', 'p50', 'p90', 'p99'] as const;
export type SummedPart = (typeof SUMMED_PARTS)[number];
export const SUMMABLE = new Set<string>(SUMMED_PARTS);

/** The nearest-rank percentile of a summed quantile part, over `column` (an ordered-set aggregate). */
export const summedQuantile = (p: SummedPart, dialect: SqlDialect, column: string): string | null =>
  QUANTILE[p] === undefined ? null : dialect.percentile(QUANTILE[p], column);

export const dbl = (dialect: SqlDialect) => dialect.double;

/** Exact nearest-rank percentile of skill-invocation durations; `filtered` when other rows are present. */
export function percentileSql(q: number, dialect: SqlDialect, filtered: boolean): string {
  const agg = dialect.percentile(q, 'duration_ms');
  return filtered ? `${agg} FILTER (WHERE ${INVOCATION})` : agg;
}

/** A part over raw rows, as a double so that every branch of a UNION has the same type. */
export function partSql(p: Part, dialect: SqlDialect): string {
  const sql = ((): string => {
    switch (p) {
      case 'spans':
        return 'COUNT(*)';
      case 'inv':
        return `COUNT(*) FILTER (WHERE ${INVOCATION})`;
      case 'err':
        return `COUNT(*) FILTER (WHERE ${INVOCATION} AND is_error)`;
      case 'tool':
        return 'COUNT(*) FILTER (WHERE is_tool_call)';
      case 'tokens':
        return 'COALESCE(SUM(tokens), 0)';
      case 'cache_read':
        return 'COALESCE(SUM(cache_read_tokens), 0)';
      case 'cache_creation':
        return 'COALESCE(SUM(cache_creation_tokens), 0)';
      case 'cost':
        return 'COALESCE(SUM(cost), 0)';
      case 'traces':
        return 'COUNT(DISTINCT trace_key)';
      case 'sessions':
        return 'COUNT(DISTINCT session_id)';
      case 'users':
        return 'COUNT(DISTINCT user_id)';
      case 'p50':
      case 'p90':
      case 'p99':
        return percentileSql(QUANTILE[p] as number, dialect, true);
      default:
        throw new Error(`part ${p} is summed from metric points or evaluations, not from span rows`);
    }
  })();
  return `(${sql})::${dbl(dialect)}`;
}

/** A measure from its parts (columns p_<part>). */
export function finalSql(m: Measure): string {
  const errorRate = 'p_err / NULLIF(p_inv, 0)';
  // Counts are 0, not null, in a bucket that has metric points and no spans.
  const count = (part: Part) => `COALESCE(p_${part}, 0)`;
  switch (m) {
    case 'sessions':
      return count('sessions');
    case 'traces':
      return count('traces');
    case 'spans':
      return count('spans');
    case 'skill_invocations':
      return count('inv');
    case 'tool_calls':
      return count('tool');
    case 'tokens':
      return count('tokens');
    case 'cache_read_tokens':
      return count('cache_read');
    case 'cache_creation_tokens':
      return count('cache_creation');
    case 'active_users':
      return count('users');
    case 'error_rate':
      return errorRate;
    case 'success_rate':
      return `1 - ${errorRate}`;
    case 'tokens_per_trace':
      return 'p_tokens / NULLIF(p_traces, 0)';
    case 'cost':
      return count('cost');
    case 'lines_added':
    case 'lines_removed':
    case 'commits':
    case 'pull_requests':
    case 'active_time':
      return count(m);
    case 'latency_p50':
      return 'p_p50';
    case 'latency_p90':
      return 'p_p90';
    case 'latency_p99':
      return 'p_p99';
    case 'evaluation_score':
      return 'p_eval_sum / NULLIF(p_eval_scored, 0)';
    case 'evaluation_pass_rate':
      return 'p_eval_passed / NULLIF(p_eval_judged, 0)';
  }
}
