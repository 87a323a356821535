/**
 * Exactly once for the DuckDB writer (DESIGN §12): which rows of an append group are stored
 * already, by identity: a span by (org_id, trace_id, span_id, start_s), a metric point by (org_id,
 * key, time_s). Rows repeated within the group count once; the others are answered from what the
 * writer remembers (recent-spans.ts) and, where that cannot tell, from the tables, by a lookup that
 * reads only the row groups of the rows' start times (zone maps on `start_s` / `time_s`).
 *
 * The writer is the file's only writer and runs these lookups and its appends one after the
 * other, so nothing can be stored between a lookup and the append it decides.
 */
import {
  BIGINT,
  INTEGER,
  UHUGEINT,
  VARCHAR,
  DuckDBDataChunk,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { MetricPointRow, SpanRow } from '../trace-port.ts';
import { RecentSpans, fingerprintInto } from './recent-spans.ts';

/** Rows whose start times lie within this many seconds of each other are looked up by one range. */
const CLUSTER_GAP_S = 3600;
/** Ranges one lookup reads at most (the nearest are merged): each is a scan of its row groups. */
const MAX_RANGES = 16;

const spanKey = (r: SpanRow) => `${r.org_id}\n${r.trace_id}\n${r.span_id}\n${r.start_s}`;
const pointKey = (p: MetricPointRow) => `${p.org_id}\n${p.key}\n${p.time_s}`;

/** The start-time ranges covering `times`: clusters split at gaps over CLUSTER_GAP_S, at most MAX_RANGES. */
export function rangesOf(times: readonly number[]): [number, number][] {
  const sorted = [...new Set(times)].sort((a, b) => a - b);
  const ranges: [number, number][] = [];
  for (const t of sorted) {
    const last = ranges.at(-1);
    if (last !== undefined && t - last[1] <= CLUSTER_GAP_S) last[1] = t;
    else ranges.push([t, t]);
  }
  while (ranges.length > MAX_RANGES) {
    let best = 0;
    for (let i = 1; i < ranges.length - 1; i++) {
      const gap = (ranges[i + 1] as [number, number])[0] - (ranges[i] as [number, number])[1];
      const bestGap = (ranges[best + 1] as [number, number])[0] - (ranges[best] as [number, number])[1];
      if (gap < bestGap) best = i;
    }
    const [a, b] = [ranges[best] as [number, number], ranges[best + 1] as [number, number]];
    ranges.splice(best, 2, [a[0], b[1]]);
  }
  return ranges;
}

type Probe = [DuckDBType, (i: number) => DuckDBValue][];

/**
 * The indexes of the probed rows found in `table`: the probes go to a temporary table, joined
 * with the table's rows of each range of their times (`timeColumn`) on every `columns` value.
 */
async function lookUp(
  conn: DuckDBConnection,
  table: 'spans' | 'metric_points',
  timeColumn: 'start_s' | 'time_s',
  columns: readonly string[],
  layout: Probe,
  indexes: readonly number[],
  times: readonly number[],
): Promise<Set<number>> {
  const probe = `identity_probe_${table}`;
  await conn.run(
    `CREATE TEMP TABLE IF NOT EXISTS ${probe} (i INTEGER, ${columns.map((c, k) => `${c} ${String(layout[k]?.[0])}`).join(', ')})`,
  );
  await conn.run(`DELETE FROM ${probe}`);
  const appender = await conn.createAppender(probe, 'main', 'temp');
  const types = [INTEGER, ...layout.map(([type]) => type)];
  for (let at = 0; at < indexes.length; at += 2048) {
    const slice = indexes.slice(at, at + 2048);
    const chunk = DuckDBDataChunk.create(types, slice.length);
    chunk.setColumns([slice, ...layout.map(([, get]) => slice.map(get))]);
    appender.appendDataChunk(chunk);
  }
  appender.flushSync();
  appender.closeSync();
  const on = columns.map((c) => `s.${c} = p.${c}`).join(' AND ');
  const params: number[] = [];
  const parts = rangesOf(times).map(([lo, hi]) => {
    params.push(lo, hi);
    return `SELECT p.i FROM ${probe} p SEMI JOIN (SELECT ${columns.join(', ')} FROM ${table}
      WHERE ${timeColumn} BETWEEN $${params.length - 1} AND $${params.length}) s ON ${on}`;
  });
  const found = await conn.runAndReadAll(parts.join(' UNION '), params);
  return new Set((found.getColumnsJS()[0] ?? []).map(Number));
}

/**
 * Per row of a group, the index of an earlier row with the same fingerprint (-1 if none): an open
 * addressing table over the fingerprints, no string built per row.
 */
function earlierSame(prints: Uint32Array, rows: number): Int32Array {
  let size = 16;
  while (size < rows * 2) size *= 2;
  const slots = new Int32Array(size).fill(-1);
  const earlier = new Int32Array(rows).fill(-1);
  for (let i = 0; i < rows; i++) {
    const hi = prints[i * 2] as number;
    const lo = prints[i * 2 + 1] as number;
    for (let k = (hi ^ Math.imul(lo, 0x9e3779b1)) & (size - 1); ; k = (k + 1) & (size - 1)) {
      const j = slots[k] as number;
      if (j < 0) {
        slots[k] = i;
        break;
      }
      if (prints[j * 2] === hi && prints[j * 2 + 1] === lo) {
        earlier[i] = j;
        break;
      }
    }
  }
  return earlier;
}

/**
 * Per row, whether an earlier row of the group has its identity: by fingerprint, each match
 * confirmed on the identity itself; should two identities share a fingerprint (a 2^-64
 * coincidence) the group is compared by identity alone.
 */
function repeatedRows(rows: readonly SpanRow[], prints: Uint32Array): boolean[] {
  const earlier = earlierSame(prints, rows.length);
  const repeated = new Array<boolean>(rows.length).fill(false);
  for (let i = 0; i < rows.length; i++) {
    const j = earlier[i] as number;
    if (j < 0) continue;
    if (spanKey(rows[j] as SpanRow) !== spanKey(rows[i] as SpanRow)) {
      const seen = new Set<string>();
      return rows.map((r) => {
        const key = spanKey(r);
        return seen.has(key) || !seen.add(key);
      });
    }
    repeated[i] = true;
  }
  return repeated;
}

/** What `SpanIdentities.check` found of a group: which rows to store, and their fingerprints. */
export interface GroupCheck {
  fresh: boolean[];
  prints: Uint32Array;
}

/** Which rows of a group to store: per row, true when it is new. */
export class SpanIdentities {
  private readonly recent: RecentSpans;

  constructor(recent: RecentSpans) {
    this.recent = recent;
  }

  /** `fresh[i]`: row i is stored by no earlier row, of this group or of the table. */
  async check(conn: DuckDBConnection, rows: readonly SpanRow[], nowS: number): Promise<GroupCheck> {
    this.recent.expire(nowS);
    const prints = new Uint32Array(rows.length * 2);
    rows.forEach((r, i) => fingerprintInto(prints, i * 2, r.org_id, r.trace_id, r.span_id, r.start_s));
    const fresh = new Array<boolean>(rows.length).fill(true);
    const earlier = repeatedRows(rows, prints);
    const probes: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i] as SpanRow;
      if (earlier[i] === true) fresh[i] = false;
      else if (
        !this.recent.covers(r.start_s) ||
        this.recent.mayHold(r.start_s, prints[i * 2] as number, prints[i * 2 + 1] as number)
      )
        probes.push(i);
    }
    if (probes.length > 0) {
      const row = (i: number) => rows[i] as SpanRow;
      const found = await lookUp(
        conn,
        'spans',
        'start_s',
        ['org_id', 'trace_key', 'span_id', 'start_s'],
        [
          [VARCHAR, (i) => row(i).org_id],
          [UHUGEINT, (i) => BigInt(`0x${row(i).trace_id}`)],
          [VARCHAR, (i) => row(i).span_id],
          [BIGINT, (i) => BigInt(row(i).start_s)],
        ],
        probes,
        probes.map((i) => row(i).start_s),
      );
      for (const i of found) fresh[i] = false;
    }
    return { fresh, prints };
  }

  /** Remembers the rows of a checked group that are now committed. */
  committed(rows: readonly SpanRow[], { fresh, prints }: GroupCheck): void {
    rows.forEach((r, i) => {
      if (fresh[i] === true) this.recent.add(r.start_s, prints[i * 2] as number, prints[i * 2 + 1] as number);
    });
  }

  get stats(): RecentSpans['stats'] {
    return this.recent.stats;
  }
}

/** `fresh[i]`: point i is stored by no earlier point, of this group or of the table. */
export async function freshPoints(conn: DuckDBConnection, points: readonly MetricPointRow[]): Promise<boolean[]> {
  const fresh = new Array<boolean>(points.length).fill(true);
  const seen = new Set<string>();
  const probes: number[] = [];
  points.forEach((p, i) => {
    const key = pointKey(p);
    if (seen.has(key)) fresh[i] = false;
    else {
      seen.add(key);
      probes.push(i);
    }
  });
  if (probes.length === 0) return fresh;
  const point = (i: number) => points[i] as MetricPointRow;
  const found = await lookUp(
    conn,
    'metric_points',
    'time_s',
    ['org_id', 'point_key', 'time_s'],
    [
      [VARCHAR, (i) => point(i).org_id],
      [VARCHAR, (i) => point(i).key],
      [BIGINT, (i) => BigInt(point(i).time_s)],
    ],
    probes,
    probes.map((i) => point(i).time_s),
  );
  for (const i of found) fresh[i] = false;
  return fresh;
}
