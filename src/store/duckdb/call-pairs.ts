/**
 * One MCP call, one tool call on DuckDB (../call-pairs.ts has the rule): inside the append's
 * transaction, after the new spans, the writer upserts their calls into `tool_call_pairs` and
 * applies the rule to every call that now has both sides: in `spans` and, where a superseded span
 * is sealed already, in `skill_spans`. The writer is the only one, and seal steps run between its
 * appends, so the watermark is fixed meanwhile and what a query reads changes in one commit.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import {
  SAME_SEALED,
  SUPERSEDED_TOOL_CALL,
  callStates,
  completed,
  type CallState,
  type SpanIdentity,
} from '../call-pairs.ts';
import type { SpanRow } from '../trace-port.ts';

/** Calls per statement (each binds nine values). */
const CHUNK = 400;

/** A 128-bit value as decimal text, cast to UHUGEINT in SQL (a bigint parameter would be bound as HUGEINT). */
const uhuge = (hex: string) => BigInt(`0x${hex}`).toString();

class Params {
  readonly values: DuckDBValue[] = [];
  add(v: DuckDBValue): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
  /** A span identity as (org_id, trace_key, span_id, start_s). */
  identity(s: SpanIdentity | null): string {
    const trace = this.add(s === null ? null : uhuge(s.trace_id));
    const start = this.add(s === null ? null : BigInt(s.start_s));
    return `${trace}::UHUGEINT, ${this.add(s?.span_id ?? null)}::VARCHAR, ${start}::BIGINT`;
  }
}

function sideOf(org: unknown, trace: unknown, span: unknown, start: unknown): SpanIdentity | null {
  if (typeof trace !== 'bigint') return null;
  return {
    org_id: String(org),
    trace_id: trace.toString(16).padStart(32, '0'),
    span_id: String(span),
    start_s: Number(start),
  };
}

/** Upserts `states` (the calls of rows just appended) and answers each call's sides as stored now. */
async function upsertCalls(
  w: DuckDBConnection,
  states: readonly CallState[],
): Promise<Pick<CallState, 'client' | 'server'>[]> {
  const out: Pick<CallState, 'client' | 'server'>[] = [];
  const first = (column: string) => `${column} = COALESCE(tool_call_pairs.${column}, EXCLUDED.${column})`;
  for (let i = 0; i < states.length; i += CHUNK) {
    const p = new Params();
    const values = states
      .slice(i, i + CHUNK)
      .map(
        (s) =>
          `(${p.add(uhuge(s.key))}::UHUGEINT, ${p.add(s.org_id)}, ${p.identity(s.client)}, ${p.identity(s.server)}, ${p.add(BigInt(s.last_s))}::BIGINT)`,
      );
    const sides = ['client', 'server'].flatMap((side) =>
      ['trace_key', 'span_id', 'start_s'].map((c) => `${side}_${c}`),
    );
    const rows = (
      await w.runAndReadAll(
        `INSERT INTO tool_call_pairs SELECT * FROM (VALUES ${values.join(', ')}) v
        ON CONFLICT (call_key) DO UPDATE SET ${sides.map(first).join(', ')}, last_s = greatest(tool_call_pairs.last_s, EXCLUDED.last_s)
        RETURNING org_id, ${sides.join(', ')}`,
        p.values,
      )
    ).getRowObjectsJS();
    for (const r of rows)
      out.push({
        client: sideOf(r.org_id, r.client_trace_key, r.client_span_id, r.client_start_s),
        server: sideOf(r.org_id, r.server_trace_key, r.server_span_id, r.server_start_s),
      });
  }
  return out;
}

/** The VALUES list of `spans`' identities, and the range of their starts (zone maps prune by it). */
function identities(spans: readonly SpanIdentity[], p: Params): { values: string; range: string } {
  return { values: spans.map((s) => `(${p.add(s.org_id)}, ${p.identity(s)})`).join(', '), range: startsOf(spans) };
}

const startsOf = (spans: readonly SpanIdentity[]) => {
  const starts = spans.map((s) => s.start_s);
  return `BETWEEN ${Math.min(...starts)} AND ${Math.max(...starts)}`;
};

/**
 * Pairs the tool call spans of `rows` (appended in this transaction) with the calls stored before,
 * and applies the rule to the calls now complete; `sealedSeq` is the watermark W. The caller's
 * transaction holds it all.
 */
export async function pairCalls(w: DuckDBConnection, rows: readonly SpanRow[], sealedSeq: number): Promise<void> {
  const states = callStates(rows);
  if (states.length === 0) return;
  const { superseded, served } = completed(await upsertCalls(w, states));
  if (served.length > 0) {
    // The client takes its server's duration and error (sealed copies keep theirs: no statistic
    // reads them on a row that is no invocation).
    const p = new Params();
    const pairs = served.map(
      ({ client, server }) => `(${p.add(client.org_id)}, ${p.identity(client)}, ${p.identity(server)})`,
    );
    await w.run(
      `UPDATE spans SET duration_ms = s.duration_ms, is_error = s.is_error
      FROM (VALUES ${pairs.join(', ')}) v(org_id, c_trace, c_span, c_start, s_trace, s_span, s_start)
      JOIN spans s ON s.org_id = v.org_id AND s.trace_key = v.s_trace AND s.span_id = v.s_span AND s.start_s = v.s_start
        AND s.start_s ${startsOf(served.map((x) => x.server))}
      WHERE spans.start_s ${startsOf(served.map((x) => x.client))} AND spans.org_id = v.org_id
        AND spans.trace_key = v.c_trace AND spans.span_id = v.c_span AND spans.start_s = v.c_start`,
      p.values,
    );
  }
  if (superseded.length === 0) return;
  const p = new Params();
  const { values, range } = identities(superseded, p);
  // Only spans still counted change (a call served twice supersedes its client once).
  const changed = (
    await w.runAndReadAll(
      `UPDATE spans SET category = '${SUPERSEDED_TOOL_CALL}' FROM (VALUES ${values}) v(org_id, trace_key, span_id, start_s)
      WHERE spans.start_s ${range} AND spans.org_id = v.org_id AND spans.trace_key = v.trace_key
        AND spans.span_id = v.span_id AND spans.start_s = v.start_s AND spans.category = 'tool_call'
      RETURNING spans.seq`,
      p.values,
    )
  ).getRowObjectsJS();
  const sealed = changed.map((r) => Number(r.seq)).filter((seq) => seq <= sealedSeq);
  if (sealed.length > 0) await clearSealed(w, sealed, sealedSeq, range);
}

/**
 * Clears `is_tool_call` on the sealed copies of the spans numbered `seqs` (sealed, just superseded):
 * one row per skill whose mapping is sealed (the skills skill_spans holds them for), chosen among the
 * rows no statistic tells from the span's, as many per skill as such spans were superseded.
 */
async function clearSealed(
  w: DuckDBConnection,
  seqs: readonly number[],
  sealedSeq: number,
  range: string,
): Promise<void> {
  const same = SAME_SEALED.map((c) => `k.${c} IS NOT DISTINCT FROM c.${c}`).join(' AND ');
  const ofSeqs = `seq IN (${seqs.join(', ')})`;
  await w.run(
    `UPDATE skill_spans SET is_tool_call = false WHERE rowid IN (
      SELECT rowid FROM (
        SELECT k.rowid, c.copies, row_number() OVER (PARTITION BY k.of_key, ${SAME_SEALED.map((c) => `k.${c}`).join(', ')}) AS n
        FROM skill_spans k
        JOIN (SELECT org_id, ${SAME_SEALED.join(', ')}, count(*) AS copies FROM spans WHERE ${ofSeqs} GROUP BY ALL) c ON ${same}
        JOIN (SELECT DISTINCT m.org_id, m.trace_key, sk.key FROM trace_skills m
          JOIN skill_keys sk ON sk.org_id = m.org_id AND sk.skill = m.skill WHERE m.seq <= ${sealedSeq}
          AND m.trace_key IN (SELECT trace_key FROM spans WHERE ${ofSeqs})) s
          ON s.org_id = c.org_id AND s.trace_key = k.trace_key AND s.key = k.of_key
        WHERE k.is_tool_call AND k.start_s ${range}
      ) WHERE n <= copies)`,
  );
}
