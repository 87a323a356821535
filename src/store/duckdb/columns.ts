/**
 * The column order of the tables the code writes by position, declared once: appends (append.ts)
 * and sealing (sealing.ts) follow these lists, and test/store/duckdb-columns.test.ts checks them
 * against `DESCRIBE` of a freshly migrated file. The migrations (migrations/*.sql) are frozen; a new
 * migration that changes a table changes its list here, and the test says so if one is forgotten.
 */

/** The span data `spans` and `skill_spans` share: the dimensions (harness…model hold dim_values codes). */
export const SPAN_DIMENSION_COLUMNS = [
  'start_s',
  'harness',
  'skill',
  'skill_version',
  'command',
  'mcp',
  'tool',
  'model',
  'user_id',
  'session_id',
] as const;

/** …and the measures, after the category. */
export const SPAN_MEASURE_COLUMNS = ['is_error', 'tokens', 'cost', 'duration_ms'] as const;

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
] as const;

/** `trace_skills`: which skills each trace belongs to. */
export const TRACE_SKILLS_COLUMNS = ['seq', 'org_id', 'trace_key', 'skill', 'skill_version', 'start_s'] as const;

export type SpansColumn = (typeof SPANS_COLUMNS)[number];
