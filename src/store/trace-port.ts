/**
 * The trace store port: durable span rows and the one aggregation the statistics operation needs.
 * Engines (store/duckdb, later store/postgres) implement it; test/contract/trace-contract.ts runs
 * unchanged against each, comparing with a plain TypeScript reference.
 */

export type SpanCategory = 'skill_invocation' | 'tool_call' | 'model_call' | 'other';

export const DIMENSIONS = ['harness', 'skill', 'skill_version', 'command', 'mcp', 'tool', 'model', 'user'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export const MEASURES = [
  'sessions', 'traces', 'spans', 'skill_invocations', 'tool_calls', 'tokens', 'active_users', 'error_rate',
  'success_rate', 'tokens_per_trace', 'cost', 'latency_p50', 'latency_p90', 'latency_p99',
] as const;
export type Measure = (typeof MEASURES)[number];

/** One stored span (DESIGN §9 fields). Times are Unix seconds (start) and milliseconds (duration). */
export interface SpanRow {
  org_id: string;
  workspace_id: string;
  /** 32 lowercase hex digits, as OTLP trace ids (ingestion rejects others). */
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  start_s: number;
  duration_ms: number;
  category: SpanCategory;
  harness: string | null;
  skill: string | null;
  skill_version: number | null;
  command: string | null;
  mcp: string | null;
  tool: string | null;
  model: string | null;
  user: string | null;
  session: string | null;
  tokens: number;
  cost: number;
  is_error: boolean;
}

export type FilterOp = 'eq' | 'neq' | 'in' | 'exists' | 'not_exists';

export interface SpanFilter {
  key: Dimension;
  op: FilterOp;
  /** Strings (skill_version: numbers); one for eq/neq, any number for in, none for exists. */
  values: (string | number)[];
}

/** Aggregation over the spans of one skill's traces in `[start, end)`. */
export interface AggregateQuery {
  orgId: string;
  skill: string;
  skillVersion?: number;
  startS: number;
  endS: number;
  /** Only spans of these workspaces. */
  workspaceIds: readonly string[];
  filters: SpanFilter[];
  groupBy: Dimension[];
  measures: Measure[];
  /**
   * With a bucket, rows come per group and bucket; a grouped query also gets one total row per
   * group (bucket null) over the whole range, which ranks the groups of a time series.
   */
  bucket?: 'day' | 'week';
}

export interface AggregateRow {
  groups: Partial<Record<Dimension, string | number | null>>;
  /** Bucket start (Unix seconds), or null on the per-group total rows. */
  bucket: number | null;
  values: Partial<Record<Measure, number | null>>;
}

/** The trace store cannot answer (closed, file unusable): endpoint 1 maps it to traces_unavailable. */
export class TraceStoreUnavailableError extends Error {
  constructor(message = 'the trace store is unavailable') {
    super(message);
    this.name = 'TraceStoreUnavailableError';
  }
}

/** The query was interrupted because its signal aborted. */
export class QueryCancelledError extends Error {
  constructor() {
    super('the query was cancelled');
    this.name = 'QueryCancelledError';
  }
}

export interface TraceStore {
  readonly engine: 'duckdb' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Resolves only once the spans are durably stored. */
  insertSpans(rows: readonly SpanRow[]): Promise<void>;
  countSpans(): Promise<number>;
  /** Rejects with an AbortError-like error when `signal` aborts (the query is cancelled). */
  aggregate(query: AggregateQuery, signal?: AbortSignal): Promise<AggregateRow[]>;
}

/** Start of the UTC day or ISO week (Monday) holding `s`. */
export function bucketStart(s: number, bucket: 'day' | 'week'): number {
  const day = Math.floor(s / 86400);
  if (bucket === 'day') return day * 86400;
  return (day - ((((day + 3) % 7) + 7) % 7)) * 86400;
}
