/**
 * Writing a batch of spans to the DuckDB trace store, in one transaction: the spans (with their
 * sequence numbers, 128-bit trace keys and dimension codes), the trace -> skill mappings their
 * skill invocations name, the trace -> agent mappings of the spans that name an agent, and the
 * dictionary values first used by them (dictionary.ts). Column-wise DataChunks:
 * one native call per 2,048 rows and column instead of one per value.
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  INTEGER,
  UHUGEINT,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { MetricPointRow, SpanRow } from '../trace-port.ts';
import { appendRows, type Layout } from './appender.ts';
import type { EvaluationRow } from '../evaluation-row.ts';
import { ENCODED, type Dictionary, type DictionaryBatch, type EncodedDimension } from './dictionary.ts';
import {
  EVALUATIONS_COLUMNS,
  METRIC_POINTS_COLUMNS,
  SPANS_COLUMNS,
  TRACE_AGENTS_COLUMNS,
  type SpansColumn,
} from './columns.ts';

const TRACE_ID = /^[0-9a-f]{32}$/;
const INT32_MAX = 2 ** 31 - 1;

/** Why a row cannot be stored in the columns of schema.ts, or null (ingestion maps values into range). */
export function unstorable(r: SpanRow): string | null {
  if (!TRACE_ID.test(r.trace_id))
    return `trace_id must be 32 lowercase hex digits, got ${JSON.stringify(r.trace_id.slice(0, 40))}`;
  if (r.skill_version !== null && !(Number.isInteger(r.skill_version) && Math.abs(r.skill_version) <= INT32_MAX))
    return `skill_version out of range: ${r.skill_version}`;
  if (
    ![r.tokens, r.cache_read_tokens, r.cache_creation_tokens].every((n) => Number.isSafeInteger(Math.round(n))) ||
    !Number.isSafeInteger(r.start_s)
  )
    return 'tokens or start_s out of range';
  if (!Number.isFinite(r.cost) || !Number.isFinite(r.duration_ms)) return 'cost or duration_ms is not a finite number';
  return null;
}

/** A span as appended: its sequence number, trace key and dimension codes (ENCODED order). */
interface Stored {
  row: SpanRow;
  seq: number;
  key: bigint;
  codes: (number | null)[];
}

const code = (d: EncodedDimension) => {
  const i = ENCODED.indexOf(d);
  return (s: Stored) => s.codes[i] ?? null;
};

/** Each column of `spans` with its type and value: SPAN_LAYOUT puts them in the declared order. */
const SPAN_VALUES: Record<SpansColumn, [DuckDBType, (s: Stored) => DuckDBValue]> = {
  seq: [BIGINT, (s) => BigInt(s.seq)],
  org_id: [VARCHAR, (s) => s.row.org_id],
  workspace_id: [VARCHAR, (s) => s.row.workspace_id],
  trace_key: [UHUGEINT, (s) => s.key],
  span_id: [VARCHAR, (s) => s.row.span_id],
  parent_span_id: [VARCHAR, (s) => s.row.parent_span_id],
  name: [VARCHAR, (s) => s.row.name],
  start_s: [BIGINT, (s) => BigInt(s.row.start_s)],
  harness: [INTEGER, code('harness')],
  skill: [INTEGER, code('skill')],
  skill_version: [INTEGER, (s) => s.row.skill_version],
  command: [INTEGER, code('command')],
  mcp: [INTEGER, code('mcp')],
  tool: [INTEGER, code('tool')],
  model: [INTEGER, code('model')],
  user_id: [VARCHAR, (s) => s.row.user],
  session_id: [VARCHAR, (s) => s.row.session],
  category: [VARCHAR, (s) => s.row.category],
  is_error: [BOOLEAN, (s) => s.row.is_error],
  tokens: [BIGINT, (s) => BigInt(Math.round(s.row.tokens))],
  cost: [DOUBLE, (s) => s.row.cost],
  duration_ms: [DOUBLE, (s) => s.row.duration_ms],
  provider: [INTEGER, code('provider')],
  agent: [INTEGER, code('agent')],
  cache_read_tokens: [BIGINT, (s) => BigInt(Math.round(s.row.cache_read_tokens))],
  cache_creation_tokens: [BIGINT, (s) => BigInt(Math.round(s.row.cache_creation_tokens))],
};
const SPAN_LAYOUT: Layout<Stored> = SPANS_COLUMNS.map((c) => SPAN_VALUES[c]);
/** Types and extractors in the column order of `trace_skills` (TRACE_SKILLS_COLUMNS of columns.ts). */
const MAPPING_LAYOUT: Layout<Stored> = [
  [BIGINT, (s) => BigInt(s.seq)],
  [VARCHAR, (s) => s.row.org_id],
  [UHUGEINT, (s) => s.key],
  [VARCHAR, (s) => s.row.skill],
  [INTEGER, (s) => s.row.skill_version],
  [BIGINT, (s) => BigInt(s.row.start_s)],
];
const AGENT_MAPPING_VALUES: Record<(typeof TRACE_AGENTS_COLUMNS)[number], [DuckDBType, (s: Stored) => DuckDBValue]> = {
  org_id: [VARCHAR, (s) => s.row.org_id],
  trace_key: [UHUGEINT, (s) => s.key],
  agent: [INTEGER, code('agent')],
  workspace_id: [VARCHAR, (s) => s.row.workspace_id],
  start_s: [BIGINT, (s) => BigInt(s.row.start_s)],
};
const AGENT_MAPPING_LAYOUT: Layout<Stored> = TRACE_AGENTS_COLUMNS.map((c) => AGENT_MAPPING_VALUES[c]);
const POINT_VALUES: Record<(typeof METRIC_POINTS_COLUMNS)[number], [DuckDBType, (p: MetricPointRow) => DuckDBValue]> = {
  org_id: [VARCHAR, (p) => p.org_id],
  workspace_id: [VARCHAR, (p) => p.workspace_id],
  session_id: [VARCHAR, (p) => p.session],
  metric: [VARCHAR, (p) => p.metric],
  time_s: [BIGINT, (p) => BigInt(p.time_s)],
  value: [DOUBLE, (p) => p.value],
  point_key: [VARCHAR, (p) => p.key],
};
const POINT_LAYOUT: Layout<MetricPointRow> = METRIC_POINTS_COLUMNS.map((c) => POINT_VALUES[c]);
const EVALUATION_VALUES: Record<(typeof EVALUATIONS_COLUMNS)[number], [DuckDBType, (e: EvaluationRow) => DuckDBValue]> =
  {
    org_id: [VARCHAR, (e) => e.org_id],
    workspace_id: [VARCHAR, (e) => e.workspace_id],
    eval_key: [VARCHAR, (e) => e.key],
    trace_key: [UHUGEINT, (e) => traceKey(e.trace_id)],
    span_id: [VARCHAR, (e) => e.span_id],
    response_id: [VARCHAR, (e) => e.response_id],
    name: [VARCHAR, (e) => e.name],
    score: [DOUBLE, (e) => e.score],
    label: [VARCHAR, (e) => e.label],
    passed: [BOOLEAN, (e) => e.passed],
    explanation: [VARCHAR, (e) => e.explanation],
    time_s: [BIGINT, (e) => BigInt(e.time_s)],
  };
const EVALUATION_LAYOUT: Layout<EvaluationRow> = EVALUATIONS_COLUMNS.map((c) => EVALUATION_VALUES[c]);
const DICTIONARY_LAYOUT: Layout<[number, string]> = [
  [INTEGER, ([id]) => id],
  [VARCHAR, ([, value]) => value],
];

/** The 32 hex digits of a trace id (checked by insertSpans) as a 128-bit integer. */
const traceKey = (traceId: string): bigint => BigInt(`0x${traceId}`);

/** Why a metric point cannot be stored, or null (ingestion maps values into range). */
export function unstorablePoint(p: MetricPointRow): string | null {
  if (!Number.isSafeInteger(p.time_s)) return 'time_s out of range';
  if (!Number.isFinite(p.value)) return 'value is not a finite number';
  return null;
}

/** Why an evaluation cannot be stored, or null (ingestion checks what it maps). */
export function unstorableEvaluation(e: EvaluationRow): string | null {
  if (!TRACE_ID.test(e.trace_id))
    return `trace_id must be 32 lowercase hex digits, got ${JSON.stringify(e.trace_id.slice(0, 40))}`;
  if (!Number.isSafeInteger(e.time_s)) return 'time_s out of range';
  if (e.score !== null && !Number.isFinite(e.score)) return 'score is not a finite number';
  return null;
}

/** What one append writes besides spans: harness metric points and evaluations. */
export interface AppendExtras {
  points: readonly MetricPointRow[];
  evaluations: readonly EvaluationRow[];
}

/**
 * Appends `rows` numbered from `firstSeq`, harness metric points and evaluations, and commits. Dimension values the dictionary's cache
 * misses are looked up in dim_values inside the transaction, new ones get codes stored with the
 * spans; the codes assigned are taken back unless the transaction commits (a later batch then
 * assigns and stores them again), and enter the cache only once committed. `inTransaction` runs
 * after the rows are appended, before the commit (the writer pairs their tool calls: call-pairs.ts).
 */
export async function appendSpans(
  w: DuckDBConnection,
  dictionary: Dictionary,
  rows: readonly SpanRow[],
  firstSeq: number,
  extras: AppendExtras = { points: [], evaluations: [] },
  inTransaction: () => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  const values = new Set<string>();
  for (const row of rows) {
    for (const d of ENCODED) {
      const v = row[d];
      if (v !== null) values.add(v);
    }
  }
  await w.run('BEGIN TRANSACTION');
  let batch: DictionaryBatch | undefined;
  try {
    batch = await dictionary.encode(w, values);
    const { codes } = batch;
    const stored: Stored[] = rows.map((row, i) => ({
      row,
      seq: firstSeq + i,
      key: traceKey(row.trace_id),
      codes: ENCODED.map((d) => {
        const v = row[d];
        return v === null ? null : (codes.get(v) as number);
      }),
    }));
    const mappings = new Map<string, Stored>();
    const agents = new Map<string, Stored>();
    for (const s of stored) {
      if (s.row.category === 'skill_invocation' && s.row.skill !== null)
        mappings.set(`${s.row.org_id}\u0000${s.row.trace_id}\u0000${s.row.skill}\u0000${s.row.skill_version}`, s);
      if (s.row.agent !== null)
        agents.set(`${s.row.org_id}\u0000${s.row.trace_id}\u0000${s.row.agent}\u0000${s.row.workspace_id}`, s);
    }
    await appendRows(w, { table: 'spans' }, SPAN_LAYOUT, stored);
    await appendRows(w, { table: 'trace_skills' }, MAPPING_LAYOUT, [...mappings.values()]);
    await appendRows(w, { table: 'trace_agents' }, AGENT_MAPPING_LAYOUT, [...agents.values()]);
    await appendRows(w, { table: 'dim_values' }, DICTIONARY_LAYOUT, batch.added);
    await appendRows(w, { table: 'metric_points' }, POINT_LAYOUT, extras.points);
    await appendRows(w, { table: 'evaluations' }, EVALUATION_LAYOUT, extras.evaluations);
    await inTransaction();
    await w.run('COMMIT');
  } catch (err) {
    await w.run('ROLLBACK').catch(() => undefined);
    if (batch !== undefined) dictionary.rolledBack(batch);
    throw err;
  }
  dictionary.committed(batch);
}
