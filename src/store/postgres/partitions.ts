/**
 * The monthly partitions of the raw trace tables (trace migration 005): `spans` by start_s and
 * `metric_points` by time_s, one partition per UTC month, every row of a month without one in the
 * default partition.
 *
 * - Ahead: each replica makes sure, at start, that the months from MONTHS_BACK back to
 *   MONTHS_AHEAD ahead have partitions, and hourly the months from this one on. Ingestion refuses
 *   times more than a day ahead (otlp/traces/mapping.ts), so a month gets its partition a month or
 *   more before its first row. Nothing creates partitions while writing: a backfill of older
 *   months goes to the default partition, and a batch's times never make tables. (A row routed to
 *   the default partition during a month's ATTACH fails its new constraint; the store writes the
 *   batch again once.)
 * - Rows are never moved between partitions (a statement planned before a move would miss them):
 *   a month whose rows are already in the default partition keeps them there, unpartitioned.
 * - Retention (pruneMonths) drops the months that end by its cutoff whole, last in its
 *   transaction, and deletes the rest of what lies before the cutoff.
 */
import type pg from 'pg';

const MONTHS_BACK = 2;
const MONTHS_AHEAD = 2;
/** How long creating or dropping a partition waits for its locks before leaving it for later. */
const LOCK_WAIT = '2s';
const MAINTAIN_EVERY_MS = 3_600_000;
/** How long a replica's upkeep at start waits for another replica's to end. */
const CREATOR_WAIT = '30s';
/** Months starting at least this far ahead are created without an exclusive lock during the default partition's scan. */
const GUARDED_AHEAD_S = 2 * 86_400;
/** One creator of partitions at a time per schema (trace_month_partition takes the same key). */
const PARTITIONS_LOCK = "hashtext('gateway.trace_partitions:' || current_schema())";

/** The partitioned tables, with the column they are partitioned by. */
const PARTITIONED = { spans: 'start_s', metric_points: 'time_s' } as const;
type PartitionedTable = keyof typeof PARTITIONED;
const TABLES = Object.keys(PARTITIONED) as PartitionedTable[];

/** The start of the UTC month of `s` (epoch seconds), `by` months later. */
export function monthStart(s: number, by = 0): number {
  const d = new Date(s * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + by, 1) / 1000;
}

/** Errors that mean "not now": a lock not granted in time, or a deadlock with another replica's upkeep. */
const isBusy = (err: unknown) => ['55P03', '40P01'].includes((err as { code?: string }).code ?? '');

interface MonthPartition {
  /** The partition's name, schema-qualified and quoted as SQL needs it. */
  table: string;
  month: number;
}

/** The monthly partitions of `parent` in the current schema, oldest first. */
async function monthsOf(client: pg.ClientBase | pg.Pool, parent: PartitionedTable): Promise<MonthPartition[]> {
  const res = await client.query<{ table: string; name: string }>(
    `SELECT c.oid::regclass::text AS table, c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = format('%I.%I', current_schema(), $1::text)::regclass ORDER BY c.relname`,
    [parent],
  );
  const months: MonthPartition[] = [];
  for (const { table, name } of res.rows) {
    const m = new RegExp(`^${parent}_p(\\d{4})(\\d{2})$`).exec(name);
    if (m !== null) months.push({ table, month: Date.UTC(Number(m[1]), Number(m[2]) - 1, 1) / 1000 });
  }
  return months;
}

export class MonthPartitions {
  private readonly pool: pg.Pool;
  /** Now, in epoch seconds (tests move it). */
  private readonly now: () => number;
  private readonly notice: (message: string) => void;
  private maintainedAt = -Infinity;
  /** Months reported as kept in the default partition (said once each). */
  private readonly reported = new Set<string>();

  constructor(pool: pg.Pool, now: () => number, notice: (message: string) => void) {
    this.pool = pool;
    this.now = now;
    this.notice = notice;
  }

  /**
   * Creates the window's missing months (a month not created now is tried at the next upkeep, an
   * hour later, well before its first row), by one replica at a time: a session advisory lock,
   * waited for up to CREATOR_WAIT at start and skipped hourly when another replica holds it. At
   * most hourly unless `force` (at start). Never fails for a month: one not created leaves its rows
   * in the default partition, where they are read and pruned all the same.
   */
  async maintain(force = false): Promise<void> {
    if (!force && Date.now() - this.maintainedAt < MAINTAIN_EVERY_MS) return;
    this.maintainedAt = Date.now();
    const client = await this.pool.connect();
    const step = (sql: string, params: unknown[] = [], wait = LOCK_WAIT) => inStep(client, sql, params, wait);
    let broken: Error | undefined;
    try {
      const lock = force
        ? await step(`SELECT pg_advisory_lock(${PARTITIONS_LOCK}) AS outcome`, [], CREATOR_WAIT).then(() => true)
        : (await step(`SELECT pg_try_advisory_lock(${PARTITIONS_LOCK})::text AS outcome`)) === 'true';
      if (!lock) return;
      try {
        // Guards found now belong to no creation (one interrupted): dropped, so they refuse no row.
        for (const table of TABLES) {
          const leftover = await client.query<{ name: string }>(
            `SELECT conname AS name FROM pg_constraint WHERE conrelid = format('%I.%I', current_schema(), $1::text)::regclass
            AND conname ~ '_p[0-9]{6}_guard$'`,
            [`${table}_default`],
          );
          for (const { name } of leftover.rows) await step(`ALTER TABLE ${table}_default DROP CONSTRAINT ${name}`);
        }
        const now = this.now();
        for (const table of TABLES) {
          // The months back only for a table with none yet (a new database): otherwise retention may
          // have dropped them, and they were created ahead of their rows anyway.
          const fresh = force && (await monthsOf(client, table)).length === 0;
          for (let by = fresh ? -MONTHS_BACK : 0; by <= MONTHS_AHEAD; by++)
            await this.create(step, table, monthStart(now, by), now);
        }
      } finally {
        await client.query(`SELECT pg_advisory_unlock(${PARTITIONS_LOCK})`);
      }
    } catch (err) {
      broken = err instanceof Error ? err : new Error(String(err));
      if (!isBusy(err)) this.notice(`partition upkeep: ${broken.message}`);
    } finally {
      // A connection whose upkeep failed is not pooled: it may still hold the advisory lock.
      client.release(broken);
    }
  }

  /**
   * One month, under the caller's advisory lock. A month that starts at least GUARDED_AHEAD_S
   * from now takes the three steps of trace migration 005 (guard, validate, attach), so no
   * exclusive lock is held while the default partition is read; the guard refuses the month's rows
   * in the default partition meanwhile, which ingestion refuses anyway that far ahead. A nearer
   * month (a new database's) is made in one transaction.
   */
  private async create(step: Step, table: PartitionedTable, month: number, now: number): Promise<void> {
    const args = [table, PARTITIONED[table], month];
    let guarded = false;
    try {
      let outcome: string | undefined;
      if (month - now < GUARDED_AHEAD_S)
        outcome = await step('SELECT trace_month_partition($1, $2, $3) AS outcome', args);
      else {
        outcome = await step('SELECT trace_month_guard($1, $2, $3) AS outcome', args);
        if (outcome === 'guarded') {
          guarded = true;
          const valid = await step('SELECT trace_month_validate($1, $2)', [table, month]).then(
            () => true,
            (err: unknown) => {
              if ((err as { code?: string }).code === '23514') return false;
              throw err;
            },
          );
          outcome = valid ? await step('SELECT trace_month_attach($1, $2, $3) AS outcome', args) : 'in default';
          guarded = !valid || outcome === 'exists';
        }
      }
      const key = `${table} ${new Date(month * 1000).toISOString().slice(0, 7)}`;
      if (outcome === 'in default' && !this.reported.has(key)) {
        this.reported.add(key);
        this.notice(`${key}: its rows were written before its partition existed and stay in the default partition`);
      }
    } catch (err) {
      if (!isBusy(err) && (err as { code?: string }).code !== '23514') throw err;
    } finally {
      // A guard left behind is dropped here, or by the next upkeep (see maintain).
      if (guarded) await step('SELECT trace_month_unguard($1, $2)', [table, month]).catch(() => undefined);
    }
  }
}

type Step = (sql: string, params?: unknown[], wait?: string) => Promise<string | undefined>;

/** One transaction of `client`: `sql` (answering `outcome`) waiting at most `wait` for locks, no statement timeout. */
async function inStep(
  client: pg.ClientBase,
  sql: string,
  params: unknown[],
  wait: string,
): Promise<string | undefined> {
  try {
    await client.query(`BEGIN; SET LOCAL lock_timeout = '${wait}'; SET LOCAL statement_timeout = 0`);
    const res = await client.query<{ outcome?: string }>(sql, params);
    await client.query('COMMIT');
    return res.rows[0]?.outcome;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * Retention's deletions of `spans` and `metric_points` before `cutoffS`, in the caller's
 * transaction (which holds the retention locks and no statement timeout): rows of the months
 * that are not dropped are deleted first; then the months that end by the cutoff are counted and
 * dropped, last, so the drop's exclusive lock on the table is held only until the caller commits,
 * right after. When the drop cannot get its locks within LOCK_WAIT (or deadlocks with another
 * replica's upkeep) those months' rows are deleted instead. Answers the spans removed (rows
 * written into a dropped month between its count and its drop, all before the cutoff, go uncounted).
 */
export async function pruneMonths(client: pg.ClientBase, cutoffS: number): Promise<number> {
  const dropped = new Map<PartitionedTable, MonthPartition[]>();
  let spans = 0;
  for (const table of TABLES) {
    const col = PARTITIONED[table];
    const old = (await monthsOf(client, table)).filter((p) => monthStart(p.month, 1) <= cutoffS);
    dropped.set(table, old);
    // Every dropped month ends by `end`: what lies before the cutoff from there on, and anything
    // before it in the default partition, is deleted by row.
    const end = old.length === 0 ? -Infinity : monthStart((old.at(-1) as MonthPartition).month, 1);
    const deleted = async (sql: string, params: number[]) => (await client.query(sql, params)).rowCount ?? 0;
    const rows = Number.isFinite(end)
      ? (await deleted(`DELETE FROM ${table} WHERE ${col} >= $1 AND ${col} < $2`, [end, cutoffS])) +
        (await deleted(`DELETE FROM ${table}_default WHERE ${col} < $1`, [end]))
      : await deleted(`DELETE FROM ${table} WHERE ${col} < $1`, [cutoffS]);
    if (table === 'spans') spans += rows;
  }
  const months = dropped.get('spans') as MonthPartition[];
  let inMonths = 0;
  for (const p of months)
    inMonths += Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${p.table}`)).rows[0]?.n);
  await client.query(`SAVEPOINT drop_months; SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
  try {
    // Both tables at once, in the order statistics lock them: one wait of at most LOCK_WAIT.
    if ([...dropped.values()].some((ps) => ps.length > 0))
      await client.query('LOCK TABLE spans, metric_points IN ACCESS EXCLUSIVE MODE');
    for (const p of [...dropped.values()].flat()) await client.query(`DROP TABLE ${p.table}`);
    await client.query('RELEASE SAVEPOINT drop_months');
    return spans + inMonths;
  } catch (err) {
    if (!isBusy(err)) throw err;
    await client.query('ROLLBACK TO SAVEPOINT drop_months');
    for (const p of [...dropped.values()].flat()) {
      const rows = (await client.query(`DELETE FROM ${p.table}`)).rowCount ?? 0;
      if (months.includes(p)) spans += rows;
    }
    return spans;
  }
}
