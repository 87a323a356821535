/**
 * The column order of the tables the code writes by position, declared once: appends (append.ts)
 * and sealing (sealing.ts) follow these lists, and test/store/duckdb-columns.test.ts checks them
 * against `DESCRIBE` of a freshly migrated file. The migrations (migrations/*.sql) are frozen; a new
 * migration that changes a table changes its list here, and the test says so if one is forgotten.
 */
import { SPAN_DIMENSION_COLUMNS, SPAN_LATER_COLUMNS, SPAN_MEASURE_COLUMNS } from '../stats/span-columns.ts';

/** `spans`: one row per stored span, in ingestion order (`seq`). */
export const SPANS_COLUMNS = [
  'seq',
  'org_id',
  'workspace_id',
  'trace_key',
  'span_id',
  'parent_span_id',
  'name',
  ...SPAN_DIMENSION_COLUMNS,
  'category',
  ...SPAN_MEASURE_COLUMNS,
  ...SPAN_LATER_COLUMNS,
] as const;

/** `skill_spans`: the sealed spans of each skill's traces, the category as two booleans. */
export const SKILL_SPANS_COLUMNS = [
  'of_key',
  'of_versions',
  'workspace_id',
  'trace_key',
  ...SPAN_DIMENSION_COLUMNS,
  'is_invocation',
  'is_tool_call',
  ...SPAN_MEASURE_COLUMNS,
  ...SPAN_LATER_COLUMNS,
] as const;

/** `trace_skills`: which skills each trace belongs to. */
export const TRACE_SKILLS_COLUMNS = ['seq', 'org_id', 'trace_key', 'skill', 'skill_version', 'start_s'] as const;

/** `trace_agents`: which agents each trace belongs to (`agent`: a dim_values code). */
export const TRACE_AGENTS_COLUMNS = ['org_id', 'trace_key', 'agent', 'workspace_id', 'start_s'] as const;

/** `metric_points`: harness metric deltas by session, with their identity (null for points stored before it). */
export const METRIC_POINTS_COLUMNS = [
  'org_id',
  'workspace_id',
  'session_id',
  'metric',
  'time_s',
  'value',
  'point_key',
] as const;

/** `evaluations`: one row per stored evaluation (store/evaluation-row.ts), the trace as its 128-bit key. */
export const EVALUATIONS_COLUMNS = [
  'org_id',
  'workspace_id',
  'eval_key',
  'trace_key',
  'span_id',
  'response_id',
  'name',
  'score',
  'label',
  'passed',
  'explanation',
  'time_s',
] as const;

export type SpansColumn = (typeof SPANS_COLUMNS)[number];
