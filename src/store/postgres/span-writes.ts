/**
 * Writing spans and metric points to PostgreSQL exactly once (DESIGN §12). Unique indexes hold the
 * identities (trace migrations 006, 011): a span's (trace_id, span_id, org_id, start_s), a metric
 * point's (org_id, point_key, time_s), each including its table's partition key, an evaluation's
 * (org_id, eval_key, time_s). Rows go in by COPY, the
 * fast path; when a row of the batch is stored already (a resent request, on this replica or
 * another), the COPY fails on the index and the caller writes the batch again carefully: through
 * a staging table with INSERT ... ON CONFLICT DO NOTHING, which keeps the new rows only. Two
 * replicas writing the same rows at once wait for each other on the index: the second sees the
 * first's rows once they commit.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { InsertOutcome, MetricPointRow, SpanRow } from '../trace-port.ts';
import type { EvaluationRow } from '../evaluation-row.ts';
import { pairCalls } from './call-pairs.ts';

const ROWS_PER_CHUNK = 1000;
type CopyValue = string | number | boolean | null;

/** Each column of `spans` with the SpanRow value it stores, declared together so they cannot drift apart. */
const SPAN_VALUES: [string, (r: SpanRow) => CopyValue][] = [
  ['org_id', (r) => r.org_id],
  ['workspace_id', (r) => r.workspace_id],
  ['trace_id', (r) => r.trace_id],
  ['span_id', (r) => r.span_id],
  ['parent_span_id', (r) => r.parent_span_id],
  ['name', (r) => r.name],
  ['start_s', (r) => r.start_s],
  ['duration_ms', (r) => r.duration_ms],
  ['category', (r) => r.category],
  ['harness', (r) => r.harness],
  ['skill', (r) => r.skill],
  ['skill_version', (r) => r.skill_version],
  ['command', (r) => r.command],
  ['mcp', (r) => r.mcp],
  ['tool', (r) => r.tool],
  ['model', (r) => r.model],
  ['user_id', (r) => r.user],
  ['session_id', (r) => r.session],
  ['tokens', (r) => Math.round(r.tokens)],
  ['cost', (r) => r.cost],
  ['is_error', (r) => r.is_error],
  ['provider', (r) => r.provider],
  ['agent', (r) => r.agent],
  ['cache_read_tokens', (r) => Math.round(r.cache_read_tokens)],
  ['cache_creation_tokens', (r) => Math.round(r.cache_creation_tokens)],
];
/** `trace_agents`: a trace belongs to every agent one of its spans names. */
const AGENT_MAPPING: [string, (r: SpanRow) => CopyValue][] = [
  ['org_id', (r) => r.org_id],
  ['agent', (r) => r.agent],
  ['trace_id', (r) => r.trace_id],
  ['workspace_id', (r) => r.workspace_id],
  ['start_s', (r) => r.start_s],
];
const POINT_VALUES: [string, (p: MetricPointRow) => CopyValue][] = [
  ['org_id', (p) => p.org_id],
  ['workspace_id', (p) => p.workspace_id],
  ['session_id', (p) => p.session],
  ['metric', (p) => p.metric],
  ['time_s', (p) => p.time_s],
  ['value', (p) => p.value],
  ['point_key', (p) => p.key],
];

const EVALUATION_VALUES: [string, (e: EvaluationRow) => CopyValue][] = [
  ['org_id', (e) => e.org_id],
  ['workspace_id', (e) => e.workspace_id],
  ['eval_key', (e) => e.key],
  // 32 hex digits are a uuid's text form too.
  ['trace_key', (e) => e.trace_id],
  ['span_id', (e) => e.span_id],
  ['response_id', (e) => e.response_id],
  ['name', (e) => e.name],
  ['score', (e) => e.score],
  ['label', (e) => e.label],
  ['passed', (e) => e.passed],
  ['explanation', (e) => e.explanation],
  ['time_s', (e) => e.time_s],
];

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value in COPY's text format: \N for null, t/f, numbers as JavaScript writes them (integers within
 * 2^53 have no exponent), text with backslash, tab, newline and carriage return escaped. */
function copyValue(v: CopyValue): string {
  if (v === null) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  return v.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c] as string);
}

/**
 * Copies `rows` into `table` (COPY FROM STDIN, text format), ROWS_PER_CHUNK rows per chunk of
 * text: a fraction of the server's work of multi-row INSERTs with one parameter per value.
 */
async function copyRows<T>(
  client: pg.ClientBase,
  table: string,
  layout: [string, (row: T) => CopyValue][],
  rows: readonly T[],
): Promise<void> {
  if (rows.length === 0) return;
  function* chunks(): Generator<string> {
    for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) {
      let text = '';
      for (const row of rows.slice(i, i + ROWS_PER_CHUNK))
        text += `${layout.map(([, value]) => copyValue(value(row))).join('\t')}\n`;
      yield text;
    }
  }
  const columns = layout.map(([column]) => column).join(', ');
  await pipeline(Readable.from(chunks()), client.query(copyFrom(`COPY ${table} (${columns}) FROM STDIN`)));
}

/**
 * Whether a failed write may go again, carefully: a row of the batch was stored already
 * (unique_violation, a resent request), or another replica writing the same rows deadlocked with
 * this one.
 */
export const retryCarefully = (err: unknown) => ['23505', '40P01'].includes((err as { code?: string }).code ?? '');

/**
 * Copies `rows` into `table` (null: all written), or, `careful`, only those not stored yet,
 * through a staging table and INSERT ... ON CONFLICT DO NOTHING (the rows written). In the
 * caller's transaction: a plain COPY that meets a stored row fails whole, and the caller runs the
 * transaction again carefully.
 */
async function writeNew<T>(
  client: pg.ClientBase,
  table: 'spans' | 'metric_points' | 'evaluations',
  layout: [string, (row: T) => CopyValue][],
  rows: readonly T[],
  returning: string,
  careful: boolean,
): Promise<Record<string, unknown>[] | null> {
  if (!careful) {
    await copyRows(client, table, layout, rows);
    return null;
  }
  const columns = layout.map(([column]) => column).join(', ');
  const staging = `${table}_staging`;
  await client.query(
    `CREATE TEMP TABLE IF NOT EXISTS ${staging} (LIKE ${table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`,
  );
  await copyRows(client, staging, layout, rows);
  const written = await client.query(
    `INSERT INTO ${table} (${columns}) SELECT ${columns} FROM ${staging} ON CONFLICT DO NOTHING RETURNING ${returning}`,
  );
  await client.query(`TRUNCATE ${staging}`);
  return written.rows as Record<string, unknown>[];
}

/** The rows of `rows` whose key is not one of an earlier row's. */
function firstOfEach<T>(rows: readonly T[], key: (row: T) => string): T[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const k = key(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const spanIdentity = (r: SpanRow | Record<string, unknown>) =>
  `${String(r.org_id)}\n${String(r.trace_id)}\n${String(r.span_id)}\n${String(r.start_s)}`;

/**
 * Writes the spans not stored yet, the trace -> skill mappings of their skill invocations and the
 * trace -> agent mappings of those that name an agent, and pairs their tool calls with the calls
 * stored before (call-pairs.ts), in the caller's transaction; answers what was stored and what was
 * left out.
 */
export async function writeSpans(
  client: pg.ClientBase,
  rows: readonly SpanRow[],
  careful: boolean,
): Promise<InsertOutcome> {
  const unique = firstOfEach(rows, spanIdentity);
  const written = await writeNew(client, 'spans', SPAN_VALUES, unique, 'org_id, trace_id, span_id, start_s', careful);
  let stored = unique;
  if (written !== null) {
    const kept = new Set(written.map(spanIdentity));
    stored = unique.filter((r) => kept.has(spanIdentity(r)));
  }
  const skills = new Map<string, SpanRow>();
  const agents = new Map<string, SpanRow>();
  for (const r of stored) {
    if (r.category === 'skill_invocation' && r.skill !== null)
      skills.set(`${r.org_id}\u0000${r.trace_id}\u0000${r.skill}\u0000${r.skill_version}`, r);
    if (r.agent !== null) agents.set(`${r.org_id}\u0000${r.trace_id}\u0000${r.agent}\u0000${r.workspace_id}`, r);
  }
  await copyRows(
    client,
    'trace_skills',
    [
      ['org_id', (r: SpanRow) => r.org_id],
      ['skill', (r: SpanRow) => r.skill],
      ['skill_version', (r: SpanRow) => r.skill_version],
      ['trace_id', (r: SpanRow) => r.trace_id],
      ['start_s', (r: SpanRow) => r.start_s],
    ],
    [...skills.values()],
  );
  await copyRows(client, 'trace_agents', AGENT_MAPPING, [...agents.values()]);
  await pairCalls(client, stored);
  return { stored: stored.length, duplicates: rows.length - stored.length };
}

/** Writes the metric points not stored yet, in the caller's transaction. */
export async function writePoints(
  client: pg.ClientBase,
  points: readonly MetricPointRow[],
  careful: boolean,
): Promise<InsertOutcome> {
  const unique = firstOfEach(points, (p) => `${p.org_id}\n${p.key}\n${p.time_s}`);
  const written = await writeNew(client, 'metric_points', POINT_VALUES, unique, 'point_key', careful);
  const stored = written === null ? unique.length : written.length;
  return { stored, duplicates: points.length - stored };
}

/** The write of the evaluations not stored yet, run in the caller's transaction (`careful` as writeNew). */
export function writeEvaluations(
  evaluations: readonly EvaluationRow[],
): (client: pg.ClientBase, careful: boolean) => Promise<InsertOutcome> {
  return async (client, careful) => {
    const unique = firstOfEach(evaluations, (e) => `${e.org_id}\n${e.key}\n${e.time_s}`);
    const written = await writeNew(client, 'evaluations', EVALUATION_VALUES, unique, 'eval_key', careful);
    const stored = written === null ? unique.length : written.length;
    return { stored, duplicates: evaluations.length - stored };
  };
}
