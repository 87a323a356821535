/**
 * One MCP call, one tool call on DuckDB (../call-pairs.ts has the rule): inside the append's
 * transaction, after the new spans, the writer finds the calls they complete (call-sides.ts) and
 * applies the rule to them: in `spans` and, where a superseded span is sealed already, in
 * `skill_spans`. The writer is the only one, and seal steps run between its appends, so the
 * watermark is fixed meanwhile and what a query reads changes in one commit.
 */
import { BIGINT, UHUGEINT, VARCHAR, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { appendRows, type Layout } from './appender.ts';
import { SAME_SEALED, SUPERSEDED_TOOL_CALL, completed, type SpanIdentity } from '../call-pairs.ts';
import type { CallPair } from './call-sides.ts';

const IDENTITY: [string, DuckDBType, (s: SpanIdentity) => unknown][] = [
  ['trace_key', UHUGEINT, (s) => BigInt(`0x${s.trace_id}`)],
  ['span_id', VARCHAR, (s) => s.span_id],
  ['start_s', BIGINT, (s) => BigInt(s.start_s)],
];

/**
 * Fills the temporary table `name` with the identities of each of `sides` of `rows` (their columns
 * prefixed by the side's name), after an organization column: an appender, not parameters (DuckDB
 * binds a statement of thousands of parameters slowly).
 */
async function fill<T>(
  w: DuckDBConnection,
  name: string,
  rows: readonly T[],
  sides: Record<string, (row: T) => SpanIdentity>,
): Promise<void> {
  const columns = Object.entries(sides).flatMap(([side, of]) =>
    IDENTITY.map(([c, type, get]): [string, DuckDBType, (row: T) => unknown] => [
      `${side}${c}`,
      type,
      (r) => get(of(r)),
    ]),
  );
  const org = Object.values(sides)[0] as (row: T) => SpanIdentity;
  const all: [string, DuckDBType, (row: T) => unknown][] = [['org_id', VARCHAR, (r) => org(r).org_id], ...columns];
  await w.run(
    `CREATE TEMP TABLE IF NOT EXISTS ${name} (${all.map(([c, type]) => `${c} ${type.toString()}`).join(', ')})`,
  );
  await w.run(`DELETE FROM ${name}`);
  const layout: Layout<T> = all.map(([, type, get]) => [type, get as (row: T) => DuckDBValue] as const);
  await appendRows(w, { table: name, temp: true }, layout, rows);
}

/**
 * The range of the spans' starts: zone maps on `spans.start_s` prune by it. A loop, not
 * Math.min(...starts): spread as arguments, some 125,000 starts overflow the stack.
 */
const startsOf = (spans: readonly SpanIdentity[]) => {
  let [min, max] = [Infinity, -Infinity];
  for (const { start_s } of spans) [min, max] = [Math.min(min, start_s), Math.max(max, start_s)];
  return `BETWEEN ${min} AND ${max}`;
};

/**
 * Applies the rule to the calls `pairs` complete (sides appended in this transaction, with each
 * other or with sides stored before); `sealedSeq` is the watermark W. The caller's transaction
 * holds it all.
 */
export async function applyPairs(w: DuckDBConnection, pairs: readonly CallPair[], sealedSeq: number): Promise<void> {
  const { superseded, served } = completed(pairs);
  if (served.length > 0) {
    // The client takes its server's duration and error (sealed copies keep theirs: no statistic
    // reads them on a row that is no invocation).
    await fill(w, 'call_served', served, { c_: (x) => x.client, s_: (x) => x.server });
    await w.run(
      `UPDATE spans SET duration_ms = s.duration_ms, is_error = s.is_error
      FROM call_served v JOIN spans s ON s.org_id = v.org_id AND s.trace_key = v.s_trace_key
        AND s.span_id = v.s_span_id AND s.start_s = v.s_start_s AND s.start_s ${startsOf(served.map((x) => x.server))}
      WHERE spans.start_s ${startsOf(served.map((x) => x.client))} AND spans.org_id = v.org_id
        AND spans.trace_key = v.c_trace_key AND spans.span_id = v.c_span_id AND spans.start_s = v.c_start_s`,
    );
  }
  if (superseded.length === 0) return;
  const range = startsOf(superseded);
  await fill(w, 'call_superseded', superseded, { '': (x) => x });
  // Only spans still counted change (a call served twice supersedes its client once).
  const changed = (
    await w.runAndReadAll(
      `UPDATE spans SET category = '${SUPERSEDED_TOOL_CALL}' FROM call_superseded v
      WHERE spans.start_s ${range} AND spans.org_id = v.org_id AND spans.trace_key = v.trace_key
        AND spans.span_id = v.span_id AND spans.start_s = v.start_s AND spans.category = 'tool_call'
      RETURNING spans.seq`,
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
