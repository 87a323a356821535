/**
 * Where the DuckDB writer finds the other side of an MCP call (../call-pairs.ts has the rule):
 * `tool_call_sides`, one row per side of a call on a UTC day (its key, client or server, and the
 * span), appended with the spans; and, so that an append does not read that table for every
 * tool call, the fingerprints of the sides of each day the writer holds (day-identities.ts, the
 * store of fingerprints resent spans are recognized by, here over (key, side) on the key's day).
 * A new side looks its other side up among its day's fingerprints; only a match, or a day too
 * large to hold, reads the table (one query for the group). DuckDB upserts into an indexed table
 * cost far more per row (its conflict check); most tool calls never meet another side.
 *
 * The writer is the file's only writer, and the held days are loaded and extended inside its
 * append's transaction, so they hold every side stored (a fingerprint of a rolled-back append only
 * costs a lookup that finds nothing).
 */
import { BIGINT, BOOLEAN, INTEGER, UHUGEINT, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { appendRows, type Layout } from './appender.ts';
import { callSides, type CallSide, type SpanIdentity } from '../call-pairs.ts';
import { sqlText } from '../sql-values.ts';
import type { SpanRow } from '../trace-port.ts';
import { DAY_S, DayIdentities, PRINT_WORDS, fingerprintInto } from './day-identities.ts';

/** Days one group may load; sides of further unheld days are looked up in the table instead. */
const MAX_LOADS_PER_GROUP = 32;

/** A client span and a server span of one call. */
export interface CallPair {
  client: SpanIdentity;
  server: SpanIdentity;
}

const sideName = (server: boolean) => (server ? 's' : 'c');
const fingerprint = (out: Uint32Array, at: number, key: string, server: boolean, day: number) =>
  fingerprintInto(out, at, [key, sideName(server)], day * DAY_S);
const traceId = (key: unknown) => (key as bigint).toString(16).padStart(32, '0');
const pairKey = (p: CallPair) =>
  [p.client, p.server].map((s) => `${s.org_id}\n${s.trace_id}\n${s.span_id}\n${s.start_s}`).join('\n');

/**
 * The pairs of one call key's sides that `completed` (../call-pairs.ts) needs to make of them what
 * it makes of every client paired with every server, in group order: a client superseded by a
 * server of its trace, a server superseded by a client of another trace, and a client served by the
 * last server of another trace. At most one pair per server and two per client, where every client
 * with every server grows with their product (a sender reusing one MCP request id: 25 million
 * pairs for a request of 10,000 spans).
 */
export function pairsOf(group: readonly CallSide[]): CallPair[] {
  const clients = group.filter((s) => !s.server);
  const servers = group.filter((s) => s.server);
  const [first, last] = [clients[0], servers.at(-1)];
  if (first === undefined || last === undefined) return [];
  const trace = (s: CallSide) => s.span.trace_id;
  const firstElsewhere = clients.find((c) => trace(c) !== trace(first));
  const lastElsewhere = servers.findLast((s) => trace(s) !== trace(last));
  const serverOf = new Map(servers.map((s) => [trace(s), s]));
  const pairs: CallPair[] = [];
  const pair = (client: CallSide | undefined, server: CallSide | undefined) => {
    if (client !== undefined && server !== undefined) pairs.push({ client: client.span, server: server.span });
  };
  for (const s of servers) pair(trace(s) !== trace(first) ? first : firstElsewhere, s);
  // After those: a client's last pair with a server of another trace is the one it is served by.
  for (const c of clients) {
    pair(c, serverOf.get(trace(c)));
    pair(c, trace(c) !== trace(last) ? last : lastElsewhere);
  }
  return pairs;
}

/** tool_call_sides' columns of a side. */
const SIDE_LAYOUT: Layout<CallSide> = [
  [INTEGER, (s) => s.day],
  [UHUGEINT, (s) => BigInt(`0x${s.key}`)],
  [BOOLEAN, (s) => s.server],
  [VARCHAR, (s) => s.span.org_id],
  [UHUGEINT, (s) => BigInt(`0x${s.span.trace_id}`)],
  [VARCHAR, (s) => s.span.span_id],
  [BIGINT, (s) => BigInt(s.span.start_s)],
];

/** The probe of a side: the key and side of its other side. */
const PROBE_LAYOUT: Layout<CallSide> = [
  [INTEGER, (s) => s.day],
  [UHUGEINT, (s) => BigInt(`0x${s.key}`)],
  [BOOLEAN, (s) => !s.server],
];

/** The stored sides of the keys and days of `wanted` (sides whose other side may be stored). */
async function storedSides(w: DuckDBConnection, wanted: readonly CallSide[]): Promise<CallSide[]> {
  await w.run('CREATE TEMP TABLE IF NOT EXISTS call_side_probe (day INTEGER, call_key UHUGEINT, is_server BOOLEAN)');
  await w.run('DELETE FROM call_side_probe');
  await appendRows(w, { table: 'call_side_probe', temp: true }, PROBE_LAYOUT, wanted);
  const days = [...new Set(wanted.map((s) => s.day))];
  const rows = (
    await w.runAndReadAll(
      `SELECT DISTINCT t.day, t.call_key, t.is_server, t.org_id, t.trace_key, t.span_id, t.start_s
      FROM tool_call_sides t SEMI JOIN call_side_probe p ON p.day = t.day AND p.call_key = t.call_key AND p.is_server = t.is_server
      WHERE t.day IN (${days.join(', ')})`,
    )
  ).getRowObjectsJS();
  return rows.map((r) => ({
    key: (r.call_key as bigint).toString(16).padStart(32, '0'),
    day: Number(r.day),
    server: r.is_server === true,
    span: {
      org_id: sqlText(r.org_id),
      trace_id: traceId(r.trace_key),
      span_id: sqlText(r.span_id),
      start_s: Number(r.start_s),
    },
  }));
}

/** The writer's sides of calls: the table and the fingerprints of the days it holds. */
export class CallSides {
  private readonly conn: DuckDBConnection;
  private readonly days: DayIdentities;

  constructor(conn: DuckDBConnection, maxKeys: number) {
    this.conn = conn;
    this.days = new DayIdentities({ maxKeys, load: (day, each) => this.loadDay(day, each) });
  }

  private async loadDay(day: number, each: (prints: Uint32Array, count: number) => void): Promise<void> {
    const result = await this.conn.stream(
      "SELECT printf('%032x', call_key), is_server FROM tool_call_sides WHERE day = $1",
      [day],
    );
    for (;;) {
      const chunk = await result.fetchChunk();
      if (chunk === null || chunk.rowCount === 0) return;
      const [keys, servers] = [chunk.getColumnValues(0), chunk.getColumnValues(1)];
      const prints = new Uint32Array(chunk.rowCount * PRINT_WORDS);
      for (let r = 0; r < chunk.rowCount; r++)
        fingerprint(prints, r * PRINT_WORDS, String(keys[r]), servers[r] === true, day);
      each(prints, chunk.rowCount);
    }
  }

  /**
   * Stores the sides of the tool call spans of `rows` (appended in the caller's transaction) and
   * answers every pair of a client and a server span they complete, with sides stored before or
   * with each other.
   */
  async pair(rows: readonly SpanRow[]): Promise<CallPair[]> {
    const sides = callSides(rows);
    if (sides.length === 0) return [];
    const wanted = [...new Set(sides.map((s) => s.day))];
    const unheld = await this.days.hold(wanted.slice(0, MAX_LOADS_PER_GROUP));
    for (const day of wanted.slice(MAX_LOADS_PER_GROUP)) if (!this.days.isHeld(day)) unheld.add(day);
    const prints = new Uint32Array(PRINT_WORDS);
    const maybe = sides.filter((s) => {
      if (unheld.has(s.day)) return true;
      fingerprint(prints, 0, s.key, !s.server, s.day);
      return this.days.holds(s.day, prints, 0);
    });
    const found = maybe.length > 0 ? await storedSides(this.conn, maybe) : [];
    await appendRows(this.conn, { table: 'tool_call_sides' }, SIDE_LAYOUT, sides);
    for (const s of sides) {
      fingerprint(prints, 0, s.key, s.server, s.day);
      this.days.add(s.day, prints, 0);
    }
    this.days.trim();
    const byKey = new Map<string, CallSide[]>();
    for (const s of [...found, ...sides]) {
      const group = byKey.get(s.key);
      if (group === undefined) byKey.set(s.key, [s]);
      else group.push(s);
    }
    const pairs = new Map<string, CallPair>();
    for (const group of byKey.values()) for (const pair of pairsOf(group)) pairs.set(pairKey(pair), pair);
    return [...pairs.values()];
  }

  /** Retention deleted the sides of spans before `cutoffS`. */
  forgetBefore(cutoffS: number): void {
    this.days.forgetBefore(cutoffS);
  }
}
