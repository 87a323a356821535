/**
 * The span data columns every trace engine stores under these names (store/trace-port.ts SpanRow
 * fields, with `user_id` and `session_id` for `user` and `session`): declared once for the DuckDB
 * tables (duckdb/columns.ts) and the statistics' row sources (row-source.ts SOURCE_COLUMNS).
 */

/** The dimensions (in DuckDB, harness…model hold dim_values codes). */
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

/** The measures. */
export const SPAN_MEASURE_COLUMNS = ['is_error', 'tokens', 'cost', 'duration_ms'] as const;

/**
 * Columns added after the first release, at the end of every table (DuckDB's `ALTER TABLE ADD
 * COLUMN` appends, and sealing copies rows by position): the dimensions provider and agent (in
 * DuckDB, dim_values codes), then the cache token sums.
 */
export const SPAN_LATER_COLUMNS = ['provider', 'agent', 'cache_read_tokens', 'cache_creation_tokens'] as const;
