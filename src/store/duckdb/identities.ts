/**
 * Exactly once for the DuckDB writer (DESIGN §12): which rows of an append group are stored
 * already, by identity: a span by (org_id, trace_id, span_id, start_s), a metric point or an
 * evaluation by (org_id, key, time_s). Rows repeated within the group count once; the others are answered by what the
 * writer holds of their days (day-identities.ts: every stored row of a held day, loaded from the
 * table once and kept by the commits), so a write reads the table only to load a day it has not
 * held yet. A day too large to hold, or past the loads one group may make, is looked up in the
 * table by ranges of the rows' times instead (zone maps on the time column).
 *
 * The writer is the file's only writer and runs these checks and its appends one after the
 * other, so nothing can be stored between a check and the append it decides.
 */
import {
  BIGINT,
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
import { DAY_S, DayIdentities, PRINT_WORDS, fingerprintInto } from './day-identities.ts';

/** Days one group may load from the table; rows of further unheld days are looked up instead. */
const MAX_LOADS_PER_GROUP = 32;

/** Rows whose start times lie within this many seconds of each other are looked up by one range. */
const CLUSTER_GAP_S = 3600;
/** Ranges one lookup reads at most (the nearest are merged): each is a scan of its row groups. */
const MAX_RANGES = 16;

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

type Probe<Row> = [DuckDBType, (row: Row) => DuckDBValue][];

/**
 * The indexes of the probed rows found in their table: the probes go to a temporary table, joined
 * with the table's rows of each range of their times on every identity column.
 */
async function lookUp<Row>(
  conn: DuckDBConnection,
  of: IdentityOf<Row>,
  rows: readonly Row[],
  indexes: readonly number[],
): Promise<Set<number>> {
  const probe = `identity_probe_${of.table}`;
  const columns = of.probeColumns;
  await conn.run(
    `CREATE TEMP TABLE IF NOT EXISTS ${probe} (i INTEGER, ${columns.map((c, k) => `${c} ${String(of.probe[k]?.[0])}`).join(', ')})`,
  );
  await conn.run(`DELETE FROM ${probe}`);
  const layout: Layout<number> = [
    [INTEGER, (i) => i],
    ...of.probe.map(([type, get]) => [type, (i: number) => get(rows[i] as Row)] as const),
  ];
  await appendRows(conn, { table: probe, temp: true }, layout, indexes);
  const on = columns.map((c) => `s.${c} = p.${c}`).join(' AND ');
  const params: number[] = [];
  const parts = rangesOf(indexes.map((i) => of.time(rows[i] as Row))).map(([lo, hi]) => {
    params.push(lo, hi);
    return `SELECT p.i FROM ${probe} p SEMI JOIN (SELECT ${columns.join(', ')} FROM ${of.table}
      WHERE ${of.timeColumn} BETWEEN $${params.length - 1} AND $${params.length}) s ON ${on}`;
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
  const w = PRINT_WORDS;
  for (let i = 0; i < rows; i++) {
    for (
      let k = ((prints[i * w] as number) ^ Math.imul(prints[i * w + 1] as number, 0x9e3779b1)) & (size - 1);
      ;
      k = (k + 1) & (size - 1)
    ) {
      const j = slots[k] as number;
      if (j < 0) {
        slots[k] = i;
        break;
      }
      if (
        prints[j * w] === prints[i * w] &&
        prints[j * w + 1] === prints[i * w + 1] &&
        prints[j * w + 2] === prints[i * w + 2]
      ) {
        earlier[i] = j;
        break;
      }
    }
  }
  return earlier;
}

/**
 * Per row, whether an earlier row of the group has its identity: by fingerprint, each match
 * confirmed on the identity itself; should two identities share a fingerprint the group is
 * compared by identity alone.
 */
function repeatedRows<Row>(rows: readonly Row[], prints: Uint32Array, key: (row: Row) => string): boolean[] {
  const earlier = earlierSame(prints, rows.length);
  const repeated = new Array<boolean>(rows.length).fill(false);
  for (let i = 0; i < rows.length; i++) {
    const j = earlier[i] as number;
    if (j < 0) continue;
    if (key(rows[j] as Row) !== key(rows[i] as Row)) {
      const seen = new Set<string>();
      return rows.map((r) => {
        const k = key(r);
        return seen.has(k) || !seen.add(k);
      });
    }
    repeated[i] = true;
  }
  return repeated;
}

/** How one table's rows are identified, held and looked up. */
interface IdentityOf<Row> {
  table: 'spans' | 'metric_points' | 'evaluations';
  timeColumn: 'start_s' | 'time_s';
  time(row: Row): number;
  /** The identity's text fields, in the order the load's SELECT gives them (the time last). */
  fields(row: Row): string[];
  /** The identity as one string (confirming a repeat within a group). */
  key(row: Row): string;
  /** SELECT of the text fields and the time of the rows of [$1, $2) with an identity. */
  loadSql: string;
  /** The lookup's columns and the value of each for a row (rows of days not held). */
  probeColumns: readonly string[];
  probe: Probe<Row>;
}

const SPANS: IdentityOf<SpanRow> = {
  table: 'spans',
  timeColumn: 'start_s',
  time: (r) => r.start_s,
  fields: (r) => [r.org_id, r.trace_id, r.span_id],
  key: (r) => `${r.org_id}\n${r.trace_id}\n${r.span_id}\n${r.start_s}`,
  loadSql: `SELECT org_id, printf('%032x', trace_key), span_id, start_s FROM spans WHERE start_s >= $1 AND start_s < $2`,
  probeColumns: ['org_id', 'trace_key', 'span_id', 'start_s'],
  probe: [
    [VARCHAR, (r) => r.org_id],
    [UHUGEINT, (r) => BigInt(`0x${r.trace_id}`)],
    [VARCHAR, (r) => r.span_id],
    [BIGINT, (r) => BigInt(r.start_s)],
  ],
};

const POINTS: IdentityOf<MetricPointRow> = {
  table: 'metric_points',
  timeColumn: 'time_s',
  time: (p) => p.time_s,
  fields: (p) => [p.org_id, p.key],
  key: (p) => `${p.org_id}\n${p.key}\n${p.time_s}`,
  loadSql: `SELECT org_id, point_key, time_s FROM metric_points WHERE time_s >= $1 AND time_s < $2 AND point_key IS NOT NULL`,
  probeColumns: ['org_id', 'point_key', 'time_s'],
  probe: [
    [VARCHAR, (p) => p.org_id],
    [VARCHAR, (p) => p.key],
    [BIGINT, (p) => BigInt(p.time_s)],
  ],
};

const EVALUATIONS: IdentityOf<EvaluationRow> = {
  table: 'evaluations',
  timeColumn: 'time_s',
  time: (e) => e.time_s,
  fields: (e) => [e.org_id, e.key],
  key: (e) => `${e.org_id}\n${e.key}\n${e.time_s}`,
  loadSql: `SELECT org_id, eval_key, time_s FROM evaluations WHERE time_s >= $1 AND time_s < $2`,
  probeColumns: ['org_id', 'eval_key', 'time_s'],
  probe: [
    [VARCHAR, (e) => e.org_id],
    [VARCHAR, (e) => e.key],
    [BIGINT, (e) => BigInt(e.time_s)],
  ],
};

/** What `TableIdentities.check` found of a group: which rows to store, and their fingerprints. */
interface GroupCheck {
  fresh: boolean[];
  prints: Uint32Array;
}

/** The identities of one table as the writer knows them. */
class TableIdentities<Row> {
  private readonly of: IdentityOf<Row>;
  private readonly days: DayIdentities;
  private readonly conn: DuckDBConnection;

  constructor(conn: DuckDBConnection, of: IdentityOf<Row>, maxKeys: number) {
    this.conn = conn;
    this.of = of;
    this.days = new DayIdentities({ maxKeys, load: (day, each) => this.loadDay(day, each) });
  }

  /** Streams a day's stored identities into fingerprints, a chunk at a time. */
  private async loadDay(day: number, each: (prints: Uint32Array, count: number) => void): Promise<void> {
    const result = await this.conn.stream(this.of.loadSql, [day * DAY_S, (day + 1) * DAY_S]);
    const textColumns = this.of.probeColumns.length - 1;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (chunk === null || chunk.rowCount === 0) return;
      const columns = Array.from({ length: textColumns + 1 }, (_, c) => chunk.getColumnValues(c));
      const prints = new Uint32Array(chunk.rowCount * PRINT_WORDS);
      for (let r = 0; r < chunk.rowCount; r++) {
        const fields = columns.slice(0, textColumns).map((col) => String(col[r]));
        fingerprintInto(prints, r * PRINT_WORDS, fields, Number(columns[textColumns]?.[r]));
      }
      each(prints, chunk.rowCount);
    }
  }

  async check(rows: readonly Row[]): Promise<GroupCheck> {
    const prints = new Uint32Array(rows.length * PRINT_WORDS);
    rows.forEach((r, i) => fingerprintInto(prints, i * PRINT_WORDS, this.of.fields(r), this.of.time(r)));
    const repeated = repeatedRows(rows, prints, (row) => this.of.key(row));
    const fresh = repeated.map((r) => !r);
    const dayOf = (i: number) => Math.floor(this.of.time(rows[i] as Row) / DAY_S);
    const wanted = new Set<number>();
    for (let i = 0; i < rows.length; i++) if (fresh[i] === true) wanted.add(dayOf(i));
    const unheld = await this.days.hold([...wanted].slice(0, MAX_LOADS_PER_GROUP));
    for (const day of [...wanted].slice(MAX_LOADS_PER_GROUP)) if (!this.days.isHeld(day)) unheld.add(day);
    const probes: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      if (fresh[i] !== true) continue;
      const day = dayOf(i);
      if (unheld.has(day)) probes.push(i);
      else if (this.days.holds(day, prints, i * PRINT_WORDS)) fresh[i] = false;
    }
    if (probes.length > 0) {
      const found = await lookUp(this.conn, this.of, rows, probes);
      for (const i of found) fresh[i] = false;
    }
    return { fresh, prints };
  }

  /** Adds the rows of a checked group that are now committed to their held days. */
  committed(rows: readonly Row[], { fresh, prints }: GroupCheck): void {
    rows.forEach((r, i) => {
      if (fresh[i] === true) this.days.add(Math.floor(this.of.time(r) / DAY_S), prints, i * PRINT_WORDS);
    });
    this.days.trim();
  }

  forgetBefore(cutoffS: number): void {
    this.days.forgetBefore(cutoffS);
  }

  get stats(): DayIdentities['stats'] {
    return this.days.stats;
  }
}

/** The writer's identities of spans, of metric points and of evaluations, each bounded by `maxKeys`. */
export class Identities {
  readonly spans: TableIdentities<SpanRow>;
  readonly points: TableIdentities<MetricPointRow>;
  readonly evaluations: TableIdentities<EvaluationRow>;

  constructor(conn: DuckDBConnection, maxKeys: number) {
    this.spans = new TableIdentities(conn, SPANS, maxKeys);
    this.points = new TableIdentities(conn, POINTS, maxKeys);
    this.evaluations = new TableIdentities(conn, EVALUATIONS, maxKeys);
  }

  /** Retention deleted every row before `cutoffS`. */
  forgetBefore(cutoffS: number): void {
    this.spans.forgetBefore(cutoffS);
    this.points.forgetBefore(cutoffS);
    this.evaluations.forgetBefore(cutoffS);
  }
}
