/**
 * One MCP call, one tool call on PostgreSQL (../call-pairs.ts has the rule), in the transaction
 * that stores the spans: their calls are upserted into `tool_call_pairs` (the call key's
 * uniqueness makes a writer of the same call wait for the other's commit, so the second always sees
 * the first), and the rule is applied to every call that now has both sides.
 *
 * A span this transaction stored is visible to no one else yet: its category is simply changed. A
 * span stored before may be sealed already, or be sealed by a step running now from a snapshot
 * that has its old category; so that sealed copies never disagree with `spans`, such a span is
 * superseded under the sealing lock (sealing.ts: no step runs meanwhile, none starts before the
 * commit), and its sealed copies lose their tool call with the rollups that counted it, all in
 * this transaction. A client that takes its server's duration and error needs no lock: no
 * statistic reads those on a sealed row that is no invocation.
 */
import type pg from 'pg';
import {
  SAME_SEALED,
  SUPERSEDED_TOOL_CALL,
  callStates,
  completed,
  identityKey,
  type CallState,
  type SpanIdentity,
} from '../call-pairs.ts';
import type { SpanRow } from '../trace-port.ts';
import { KEEPS_ROLLUPS, rollupDeltaSql, rollupReturning } from './rollups.ts';
import { SEALING_LOCK } from './sealing.ts';

/** Identities as four parallel arrays, bound from `$first` on (unnest of them is a row set). */
const identities = (spans: readonly SpanIdentity[]): [string[], string[], string[], number[]] => [
  spans.map((s) => s.trace_id),
  spans.map((s) => s.span_id),
  spans.map((s) => s.org_id),
  spans.map((s) => s.start_s),
];
const unnest = (first: number) =>
  `SELECT * FROM unnest($${first}::text[], $${first + 1}::text[], $${first + 2}::text[], $${first + 3}::bigint[])`;
/**
 * A span's identity as the lookups here match it: the organization as an expression (`|| ''`), so
 * that the planner reaches each span through its identity index, never through (org_id, start_s),
 * which reads every span of the organization and second: a burst of 20,000 in one second, the
 * statistics not knowing it yet, took 20,000 rows a lookup. Partitions are still pruned by start_s.
 */
const identityOf = (alias = '') => `(${alias}trace_id, ${alias}span_id, ${alias}org_id || '', ${alias}start_s)`;
const IDENTITY = identityOf();

const SIDES = ['client', 'server'].flatMap((side) => ['trace_id', 'span_id', 'start_s'].map((c) => `${side}_${c}`));

type Sides = Pick<CallState, 'client' | 'server'>;

/** The columns of SAME_SEALED that are never null, in spans and in skill_spans alike. */
const NEVER_NULL = ['workspace_id', 'trace_key', 'start_s'];

/** Upserts `states` (the calls of the spans this transaction stored) and answers the calls that now have both sides. */
async function upsertCalls(client: pg.ClientBase, states: readonly CallState[]): Promise<Sides[]> {
  const first = (column: string) => `${column} = COALESCE(tool_call_pairs.${column}, EXCLUDED.${column})`;
  const side = (pick: (s: CallState) => SpanIdentity | null) => [
    states.map((s) => pick(s)?.trace_id ?? null),
    states.map((s) => pick(s)?.span_id ?? null),
    states.map((s) => pick(s)?.start_s ?? null),
  ];
  // Only the calls with both sides come back: most tool calls never meet another side.
  const res = await client.query<Record<string, string | null>>(
    `WITH upserted AS (INSERT INTO tool_call_pairs (call_key, org_id, ${SIDES.join(', ')}, last_s)
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::bigint[], $9::bigint[])
    ON CONFLICT (call_key) DO UPDATE SET ${SIDES.map(first).join(', ')}, last_s = GREATEST(tool_call_pairs.last_s, EXCLUDED.last_s)
    RETURNING org_id, ${SIDES.join(', ')})
    SELECT org_id, ${SIDES.map((c) => `${c}::text`).join(', ')} FROM upserted
    WHERE client_trace_id IS NOT NULL AND server_trace_id IS NOT NULL`,
    [
      states.map((s) => s.key),
      states.map((s) => s.org_id),
      ...side((s) => s.client),
      ...side((s) => s.server),
      states.map((s) => s.last_s),
    ],
  );
  const sideOf = (r: Record<string, string | null>, name: string): SpanIdentity | null => {
    const [trace, span, start] = [r[`${name}_trace_id`], r[`${name}_span_id`], r[`${name}_start_s`]];
    return trace == null || span == null || start == null
      ? null
      : { org_id: String(r.org_id), trace_id: trace, span_id: span, start_s: Number(start) };
  };
  return res.rows.map((r) => ({ client: sideOf(r, 'client'), server: sideOf(r, 'server') }));
}

/** Pairs the tool call spans of `stored` (stored by this transaction) with the calls stored before. */
export async function pairCalls(client: pg.ClientBase, stored: readonly SpanRow[]): Promise<void> {
  const states = callStates(stored);
  if (states.length === 0) return;
  const { superseded, served } = completed(await upsertCalls(client, states));
  if (served.length > 0)
    await client.query(
      `UPDATE spans c SET duration_ms = s.duration_ms, is_error = s.is_error
      FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::bigint[])
        v(org_id, c_trace, c_span, c_start, s_trace, s_span, s_start)
      JOIN spans s ON ${identityOf('s.')} = (v.s_trace, v.s_span, v.org_id, v.s_start)
      WHERE ${identityOf('c.')} = (v.c_trace, v.c_span, v.org_id, v.c_start)`,
      [
        served.map((x) => x.client.org_id),
        ...identities(served.map((x) => x.client)).filter((_, i) => i !== 2),
        ...identities(served.map((x) => x.server)).filter((_, i) => i !== 2),
      ],
    );
  if (superseded.length === 0) return;
  const own = new Set(stored.map(identityKey));
  const mine = superseded.filter((s) => own.has(identityKey(s)));
  const earlier = superseded.filter((s) => !own.has(identityKey(s)));
  if (mine.length > 0) await supersede(client, mine);
  if (earlier.length > 0) await supersedeEarlier(client, earlier);
}

/** Supersedes the spans that still count as tool calls among `spans`; answers those it changed, with their xid. */
async function supersede(
  client: pg.ClientBase,
  spans: readonly SpanIdentity[],
): Promise<(SpanIdentity & { xid: string })[]> {
  const changed = await client.query<Omit<SpanIdentity, 'start_s'> & { start_s: string; xid: string }>(
    `UPDATE spans SET category = '${SUPERSEDED_TOOL_CALL}' WHERE ${IDENTITY} IN (${unnest(1)}) AND category = 'tool_call'
    RETURNING org_id, trace_id, span_id, start_s, xid::text`,
    identities(spans),
  );
  return changed.rows.map((r) => ({ ...r, start_s: Number(r.start_s) }));
}

/**
 * Supersedes spans stored by earlier transactions, under the sealing lock, and their sealed copies:
 * those of the skills whose mapping lies below the watermark, when the span does too.
 */
async function supersedeEarlier(client: pg.ClientBase, spans: readonly SpanIdentity[]): Promise<void> {
  const counted = await client.query(
    `SELECT 1 FROM spans WHERE ${IDENTITY} IN (${unnest(1)}) AND category = 'tool_call' LIMIT 1`,
    identities(spans),
  );
  if (counted.rowCount === 0) return;
  await client.query(`SELECT pg_advisory_xact_lock(${SEALING_LOCK})`);
  const changed = await supersede(client, spans);
  const w = (await client.query<{ w: string }>('SELECT w::text AS w FROM sealed')).rows[0]?.w ?? '0';
  const sealed = changed.filter((c) => BigInt(c.xid) < BigInt(w));
  if (sealed.length === 0) return;
  await client.query(KEEPS_ROLLUPS);
  const data = SAME_SEALED.filter((c) => c !== 'trace_key');
  // Each superseded span meets the sealed rows of its own (skill, trace, second) only: `cs` holds
  // its skills with it, so that skill_spans is probed by them all, and the columns never null are
  // joined by equality (PostgreSQL hashes no IS NOT DISTINCT FROM). Joined to the traces' skills
  // and to the spans apart, the sealed rows were matched per organization: 10,000 superseded spans
  // took minutes, past the statement timeout.
  const same = SAME_SEALED.map((c) =>
    NEVER_NULL.includes(c) ? `k.${c} = c.${c}` : `k.${c} IS NOT DISTINCT FROM c.${c}`,
  ).join(' AND ');
  await client.query(
    `WITH c AS (SELECT org_id, trace_id, trace_id::uuid AS trace_key, ${data.join(', ')}, count(*) AS copies FROM spans
      WHERE ${IDENTITY} IN (${unnest(1)}) GROUP BY org_id, trace_id, ${data.join(', ')}),
    s AS (SELECT DISTINCT m.org_id, m.trace_id::uuid AS trace_key, m.skill FROM trace_skills m
      WHERE m.xid < $5::xid8 AND (m.org_id, m.trace_id) IN (SELECT org_id, trace_id FROM c)),
    cs AS MATERIALIZED (SELECT c.*, s.skill AS of_skill FROM c JOIN s ON s.org_id = c.org_id AND s.trace_key = c.trace_key),
    picked AS (SELECT ctid FROM (
      SELECT k.ctid, c.copies,
        row_number() OVER (PARTITION BY k.org_id, k.of_skill, ${SAME_SEALED.map((col) => `k.${col}`).join(', ')}) AS n
      FROM skill_spans k JOIN cs c ON k.org_id = c.org_id AND k.of_skill = c.of_skill AND ${same}
      WHERE k.is_tool_call) x WHERE n <= copies),
    cleared AS (UPDATE skill_spans k SET is_tool_call = false FROM picked WHERE k.ctid = picked.ctid ${rollupReturning('k')})
    ${rollupDeltaSql('cleared', -1, true)}`,
    [...identities(sealed), w],
  );
}
