/**
 * The monthly partitions of the raw trace tables (trace migration 005): `spans` by start_s and
 * `metric_points` by time_s, one partition per UTC month inside a window around now (MONTHS_BACK
 * months back to MONTHS_AHEAD ahead), every other row in the default partition.
 *
 * - Ahead: each replica makes sure, at start and then hourly, that the current month and the
 *   next MONTHS_AHEAD have partitions, so the months ingestion writes into exist before it does.
 * - On demand: a batch with rows of a month of the window that has no partition (a backfill)
 *   creates it first. Best effort: a month whose partition cannot be made now (its locks are busy
 *   for longer than LOCK_WAIT) keeps its rows in the default partition, where every query and
 *   retention still finds them; nothing waits on it and no insert fails for it.
 * - Retention drops the months that end before its cutoff whole (dropBefore), then deletes rows.
 */
import type pg from 'pg';

const MONTHS_BACK = 24;
const MONTHS_AHEAD = 3;
/** How long creating or dropping a partition waits for its locks before leaving it for later. */
const LOCK_WAIT = '2s';
/** A month whose partition could not be made is not tried again for this long. */
const RETRY_MS = 60_000;
const MAINTAIN_EVERY_MS = 3_600_000;

/** The partitioned tables, with the column they are partitioned by. */
const PARTITIONED = { spans: 'start_s', metric_points: 'time_s' } as const;
export type PartitionedTable = keyof typeof PARTITIONED;
const TABLES = Object.keys(PARTITIONED) as PartitionedTable[];

/** The start of the UTC month of `s` (epoch seconds), `by` months later; NaN for an invalid time. */
export function monthStart(s: number, by = 0): number {
  const d = new Date(s * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + by, 1) / 1000;
}

/** The month start a partition's name (`spans_p202611`) stands for, or null for another table. */
function partitionMonth(table: PartitionedTable, name: string): number | null {
  const m = new RegExp(`^${table}_p(\\d{4})(\\d{2})$`).exec(name);
  return m === null ? null : Date.UTC(Number(m[1]), Number(m[2]) - 1, 1) / 1000;
}

async function partitionsOf(client: pg.Pool | pg.ClientBase, table: PartitionedTable): Promise<Map<number, string>> {
  const res = await client.query<{ name: string }>(
    'SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass',
    [table],
  );
  const months = new Map<number, string>();
  for (const { name } of res.rows) {
    const month = partitionMonth(table, name);
    if (month !== null) months.set(month, name);
  }
  return months;
}

const isLockTimeout = (err: unknown) => (err as { code?: string }).code === '55P03';

export class MonthPartitions {
  /** Per table, the months known to have a partition (another replica's drop is seen at the next maintain). */
  private readonly known = new Map<PartitionedTable, Set<number>>(TABLES.map((t) => [t, new Set<number>()]));
  private readonly failedAt = new Map<string, number>();
  private maintainedAt = -Infinity;

  private readonly pool: pg.Pool;
  /** Now, in epoch seconds (tests move it). */
  private readonly now: () => number;
  private readonly notice: (message: string) => void;

  constructor(pool: pg.Pool, now: () => number, notice: (message: string) => void) {
    this.pool = pool;
    this.now = now;
    this.notice = notice;
  }

  /** Reloads which partitions exist and creates the months ahead, at most hourly unless `force`. */
  async maintain(force = false): Promise<void> {
    if (!force && Date.now() - this.maintainedAt < MAINTAIN_EVERY_MS) return;
    this.maintainedAt = Date.now();
    for (const table of TABLES) {
      this.known.set(table, new Set((await partitionsOf(this.pool, table)).keys()));
      const now = this.now();
      await this.create(
        table,
        Array.from({ length: MONTHS_AHEAD + 1 }, (_, i) => monthStart(now, i)),
      );
    }
  }

  /** Creates the partitions missing for the months of the window the rows' times fall in. */
  async cover<T>(table: PartitionedTable, rows: readonly T[], time: (row: T) => number): Promise<void> {
    const known = this.known.get(table) as Set<number>;
    const now = this.now();
    const first = monthStart(now, -MONTHS_BACK);
    const end = monthStart(now, MONTHS_AHEAD + 1);
    const missing = new Set<number>();
    // Rows come in runs of one month: the last month seen is checked first.
    let lo = NaN;
    let hi = NaN;
    for (const row of rows) {
      const t = time(row);
      if ((t >= lo && t < hi) || !(t >= first && t < end)) continue;
      lo = monthStart(t);
      hi = monthStart(lo, 1);
      if (!known.has(lo)) missing.add(lo);
    }
    if (missing.size > 0) await this.create(table, [...missing]);
  }

  /**
   * Creates each missing month's partition in a transaction of its own, skipping months that
   * failed in the last RETRY_MS and stopping at the first that waited LOCK_WAIT in vain.
   */
  private async create(table: PartitionedTable, months: number[]): Promise<void> {
    const known = this.known.get(table) as Set<number>;
    for (const month of months) {
      const key = `${table}:${month}`;
      if (known.has(month) || Date.now() - (this.failedAt.get(key) ?? -Infinity) < RETRY_MS) continue;
      const client = await this.pool.connect();
      try {
        await client.query(`BEGIN; SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
        await client.query('SELECT trace_month_partition($1, $2, $3)', [table, PARTITIONED[table], month]);
        await client.query('COMMIT');
        known.add(month);
        this.failedAt.delete(key);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        this.failedAt.set(key, Date.now());
        // One wait per batch at most: the other months are tried by the next batch.
        if (isLockTimeout(err)) return;
        this.notice(
          `the ${table} partition of ${new Date(month * 1000).toISOString().slice(0, 7)} was not created (its rows stay in the default partition): ${err instanceof Error ? err.message : String(err)}`,
        );
      } finally {
        client.release();
      }
    }
  }

  /**
   * Retention's first part: drops the partitions of months that end by `cutoffS`, in one short
   * transaction that first takes `locks` (SQL answering `ok`: whether this replica prunes now),
   * then waits at most LOCK_WAIT for the tables. Answers the spans dropped; 0 when it could not (the rows
   * are then deleted one by one, as in the default partition). Spans written into a dropped month
   * between its count and its drop are gone uncounted.
   */
  async dropBefore(cutoffS: number, locks: string): Promise<number> {
    const client = await this.pool.connect();
    let spans = 0;
    try {
      await client.query('BEGIN');
      if ((await client.query<{ ok: boolean }>(locks)).rows[0]?.ok !== true) {
        await client.query('ROLLBACK');
        return 0;
      }
      await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
      const dropped: [PartitionedTable, number][] = [];
      for (const table of TABLES)
        for (const [month, name] of await partitionsOf(client, table)) {
          if (monthStart(month, 1) > cutoffS) continue;
          if (table === 'spans')
            spans += Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`)).rows[0]?.n);
          await client.query(`DROP TABLE ${name}`);
          dropped.push([table, month]);
        }
      await client.query('COMMIT');
      for (const [table, month] of dropped) this.known.get(table)?.delete(month);
      return spans;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (isLockTimeout(err)) return 0;
      throw err;
    } finally {
      client.release();
    }
  }
}
