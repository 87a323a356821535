/**
 * The trace store port: durable span rows and the one aggregation the statistics operation needs.
 * Engines (store/duckdb, store/postgres) implement it; test/contract/trace-contract.ts runs
 * unchanged against each, comparing with a plain TypeScript reference.
 */
import { EVALUATION_MEASURES, type EvaluationRow } from './evaluation-row.ts';
import type { EvaluationFactsReader, SubjectFactsReader } from './facts-port.ts';
import type { AgentNameAdmitter } from './agent-names.ts';
import type { StoredBytes } from './stored-bytes.ts';

export type SpanCategory = 'skill_invocation' | 'tool_call' | 'model_call' | 'other';

export const SPAN_DIMENSIONS = [
  'harness',
  'skill',
  'skill_version',
  'command',
  'mcp',
  'tool',
  'model',
  'user',
  'provider',
  'agent',
] as const;
export type SpanDimension = (typeof SPAN_DIMENSIONS)[number];
export const DIMENSIONS = [...SPAN_DIMENSIONS, 'evaluation'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/**
 * Measures summed from harness metric points (Claude Code's counters, docs/send-telemetry.md): a
 * point counts for a group when its session is a session of the group's selected spans over the
 * whole range, and for the bucket its own time falls in.
 */
export const HARNESS_MEASURES = ['lines_added', 'lines_removed', 'commits', 'pull_requests', 'active_time'] as const;
export type HarnessMeasure = (typeof HARNESS_MEASURES)[number];

export const MEASURES = [
  'sessions',
  'traces',
  'spans',
  'skill_invocations',
  'tool_calls',
  'tokens',
  'cache_read_tokens',
  'cache_creation_tokens',
  'active_users',
  'error_rate',
  'success_rate',
  'tokens_per_trace',
  'cost',
  'latency_p50',
  'latency_p90',
  'latency_p99',
  ...HARNESS_MEASURES,
  ...EVALUATION_MEASURES,
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
  /** The model's provider (`gen_ai.provider.name` and older names). */
  provider: string | null;
  /** A registry agent's id, or the agent name as sent (otlp/ingest.ts). */
  agent: string | null;
  /** Input tokens read from the provider's prompt cache (also counted in `tokens`). */
  cache_read_tokens: number;
  /** Input tokens written to the provider's prompt cache (also counted in `tokens`). */
  cache_creation_tokens: number;
  /**
   * The MCP request a tool call span is one side of, when it names one: `mcp.session.id` and
   * `jsonrpc.request.id` (JSON text of the two). Not stored as a column: the stores pair the client
   * and server spans of one call by it (store/call-pairs.ts).
   */
  mcp_request: string | null;
  /** Which side of `mcp_request` the span is (its span kind CLIENT or SERVER), or null. */
  mcp_side: 'client' | 'server' | null;
}

/** The fields of a SpanRow, in its declaration order. */
export const SPAN_FIELDS = [
  'org_id',
  'workspace_id',
  'trace_id',
  'span_id',
  'parent_span_id',
  'name',
  'start_s',
  'duration_ms',
  'category',
  'harness',
  'skill',
  'skill_version',
  'command',
  'mcp',
  'tool',
  'model',
  'user',
  'session',
  'tokens',
  'cost',
  'is_error',
  'provider',
  'agent',
  'cache_read_tokens',
  'cache_creation_tokens',
  'mcp_request',
  'mcp_side',
] as const satisfies readonly (keyof SpanRow)[];

/**
 * One stored harness metric point: a delta of one counter of one session at `time_s`. Its identity
 * is (org_id, key, time_s): a point delivered again is stored once.
 */
export interface MetricPointRow {
  org_id: string;
  /**
   * The point's identity within its organization: a hash of its series (metric name, point and
   * resource attributes) and its start and end times (otlp/metrics/mapping.ts).
   */
  key: string;
  workspace_id: string;
  session: string;
  metric: HarnessMeasure;
  /** Unix seconds (the end of the point's interval). */
  time_s: number;
  value: number;
}

/**
 * Spans as columns: field f of span i is `columns[f][i]`. The form spans cross threads in, since
 * copying one array per field costs a fraction of copying one object per span.
 */
export interface SpanColumns {
  readonly length: number;
  readonly columns: { readonly [K in keyof SpanRow]: readonly SpanRow[K][] };
}

export function toSpanColumns(rows: readonly SpanRow[]): SpanColumns {
  const columns = Object.fromEntries(
    SPAN_FIELDS.map((f) => [f, rows.map((r) => r[f])]),
  ) as unknown as SpanColumns['columns'];
  return { length: rows.length, columns };
}

export function toSpanRows(spans: SpanColumns): SpanRow[] {
  const rows: SpanRow[] = [];
  for (let i = 0; i < spans.length; i++)
    rows.push(Object.fromEntries(SPAN_FIELDS.map((f) => [f, spans.columns[f][i]])) as unknown as SpanRow);
  return rows;
}

type FilterOp = 'eq' | 'neq' | 'in' | 'exists' | 'not_exists';

export interface SpanFilter {
  key: Dimension;
  op: FilterOp;
  /** Strings (skill_version: numbers); one for eq/neq, any number for in, none for exists. */
  values: (string | number)[];
}

/**
 * Whose traces a statistics query reads. A trace belongs to a skill when one of its skill
 * invocations names the skill (and the version, when given); to an agent when any of its spans
 * names the agent (its `agent` dimension: a registry agent's id, or a name as sent).
 */
export type StatsSubject = SkillSubject | AgentSubject;
export interface SkillSubject {
  skill: string;
  skillVersion?: number;
}
export interface AgentSubject {
  agent: string;
}

/** Aggregation over the spans of the subject's traces in `[start, end)`. */
export interface AggregateQuery {
  orgId: string;
  subject: StatsSubject;
  startS: number;
  endS: number;
  /** Only spans of these workspaces. */
  workspaceIds: readonly string[];
  filters: SpanFilter[];
  /** `evaluation` (an evaluation's name: evaluation-row.ts) groups or filters evaluation measures only. */
  groupBy: Dimension[];
  measures: Measure[];
  /**
   * With a bucket, rows come per group and bucket; a grouped query also gets one total row per
   * group (bucket null) over the whole range, which ranks the groups of a time series.
   */
  bucket?: 'day' | 'week';
  /**
   * Keep only the groups that rank within `limit` of at least one ranking (DESIGN §12: the rows an
   * engine hands back stay bounded however many distinct values the spans hold). Only with groupBy.
   */
  top?: GroupRanking[];
  /** Keep only these groups (null-safe equality on every groupBy dimension). Only with groupBy. */
  onlyGroups?: GroupValues[];
}

/**
 * Usage of tools from their tool_call spans (operation 3's trace metrics, DESIGN §8): a span counts
 * for each entry whose tool name and MCP server (null-safe) are the span's and whose window holds
 * its start, once per group. Entries may carry windows of their own, so that lookups with different
 * windows (GraphQL `Tool.usage(since:)` under aliases) are one query.
 */
export interface ToolUsageQuery {
  orgId: string;
  /** Only spans of these workspaces. */
  workspaceIds: readonly string[];
  /** The window of the entries that name none: spans starting at or after this time; null: all stored spans. */
  sinceS: number | null;
  /** Distinct (group, tool, server) entries; `group` numbers the caller's groups. */
  tools: readonly ToolUsageEntry[];
}

export interface ToolUsageEntry {
  group: number;
  tool: string;
  server: string | null;
  /** This entry's own window (as `ToolUsageQuery.sinceS`); absent: the query's. */
  sinceS?: number | null;
}

/**
 * Usage of MCP servers from their tool_call spans: a span counts for the server its `mcp` dimension
 * (`mcp.server.name`) names, whatever its tool; a server is named by its registry id.
 */
export interface ServerUsageQuery {
  orgId: string;
  /** Only spans of these workspaces. */
  workspaceIds: readonly string[];
  /** Calls starting at or after this time; null: every stored call. */
  sinceS: number | null;
  /** Server ids (the values of the `mcp` dimension). */
  servers: readonly string[];
}

export interface ServerUsageRow {
  server: string;
  calls: number;
  errors: number;
  /** Nearest-rank 95th percentile of the calls' durations. */
  p95LatencyMs: number;
  /** Start of the latest call (Unix seconds). */
  lastCalledS: number;
}

export interface ToolUsageRow {
  group: number;
  calls: number;
  errors: number;
  /** Nearest-rank 95th percentile of the calls' durations. */
  p95LatencyMs: number;
  /** Start of the latest call (Unix seconds). */
  lastCalledS: number;
}

/** The values of one group, by dimension (null: the spans without that value). */
export type GroupValues = Partial<Record<Dimension, string | number | null>>;

/**
 * A ranking of groups: by a measure over the group's whole range (with a bucket, its total row),
 * or by one of its dimension values. The order is total and the same in every engine: the ranked
 * value in `direction`, nulls last either way, then {@link compareGroups}.
 */
export interface GroupRanking {
  by: Measure | Dimension;
  direction: 'asc' | 'desc';
  limit: number;
}

export interface AggregateRow {
  groups: Partial<Record<Dimension, string | number | null>>;
  /** Bucket start (Unix seconds), or null on the per-group total rows. */
  bucket: number | null;
  values: Partial<Record<Measure, number | null>>;
}

/**
 * What one insert did: the rows it stored, and the rows it left out because a row of the same
 * identity was stored already (a resent request; DESIGN §12 "exactly once").
 */
export interface InsertOutcome {
  stored: number;
  duplicates: number;
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

/** Also answers insight detection's facts (facts-port.ts) and admits agent names as sent (agent-names.ts). */
export interface TraceStore extends SubjectFactsReader, EvaluationFactsReader, AgentNameAdmitter {
  readonly engine: 'duckdb' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Stores the spans that are not stored yet and resolves once they are durable. A span's identity
   * is (org_id, trace_id, span_id, start_s): however many times, in however many calls (on any
   * replica), a span is given, it is stored once; the outcome counts the rows left out.
   *
   * `signal` withdraws the write while it waits for its turn: the call rejects with
   * QueryCancelledError and nothing of it is stored. Once the write has begun it is no longer
   * cancelled, and the call settles with its outcome (so an answer never reports an error for rows
   * that were committed).
   */
  insertSpans(rows: readonly SpanRow[], signal?: AbortSignal): Promise<InsertOutcome>;
  /** insertSpans for spans already in columns (what ingestion hands over: cheap to pass to a thread). */
  insertColumns(spans: SpanColumns, signal?: AbortSignal): Promise<InsertOutcome>;
  countSpans(): Promise<number>;
  /**
   * A mark that moves after every write that may change an answer (spans, points or evaluations stored, even
   * as duplicates; retention), on any replica; sealing does not move it, as it changes no answer.
   * Answers computed while it reads the same may be reused (the GraphQL response cache keys
   * statistics by it). It moves only after the write commits, so an answer older than a mark is
   * never keyed to it.
   */
  watermark(): Promise<string>;
  /** As insertSpans, for harness metric points, whose identity is (org_id, key, time_s). */
  insertMetricPoints(rows: readonly MetricPointRow[], signal?: AbortSignal): Promise<InsertOutcome>;
  /** As insertSpans, for evaluations, whose identity is (org_id, key, time_s). */
  insertEvaluations(rows: readonly EvaluationRow[], signal?: AbortSignal): Promise<InsertOutcome>;
  /**
   * Retention (TRACE_RETENTION_DAYS): deletes the spans, metric points and evaluations that start before
   * `cutoffS` and answers how many spans went. A trace's mappings to its skills and agents stay
   * while any of its spans does, so the spans kept count for the subject as before: every answer
   * over a range from `cutoffS` on is unchanged.
   */
  pruneBefore(cutoffS: number): Promise<number>;
  /** What the store holds on disk, by part (store/stored-bytes.ts): cheap, for the /metrics gauges. */
  storedBytes(): Promise<StoredBytes>;
  /** Rejects with an AbortError-like error when `signal` aborts (the query is cancelled). */
  aggregate(query: AggregateQuery, signal?: AbortSignal): Promise<AggregateRow[]>;
  /** One row per group with at least one call; groups without calls are absent. */
  toolUsage(query: ToolUsageQuery, signal?: AbortSignal): Promise<ToolUsageRow[]>;
  /** One row per server with at least one call, ordered by server; servers without calls are absent. */
  serverUsage(query: ServerUsageQuery, signal?: AbortSignal): Promise<ServerUsageRow[]>;
}

/** Start of the UTC day or ISO week (Monday) holding `s`. */
export function bucketStart(s: number, bucket: 'day' | 'week'): number {
  const day = Math.floor(s / 86400);
  if (bucket === 'day') return day * 86400;
  return (day - ((((day + 3) % 7) + 7) % 7)) * 86400;
}
