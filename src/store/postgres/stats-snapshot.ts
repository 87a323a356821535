/**
 * The transaction every statistics read runs in (aggregate and detection's facts): read-only
 * REPEATABLE READ, so the sealed watermark and the rows are read in one snapshot; the raw tables
 * locked before the snapshot is taken (LOCK takes none: a snapshot taken while retention drops a
 * month, before its commit, would see its deletions undone but the dropped month gone,
 * partitions.ts); JIT off (its compilation costs more than these statements run) and sorts with
 * STATS_WORK_MEM (PostgreSQL's default 4 MB spills the per-bucket sort of a 30-day range to disk; a
 * statement has a handful of such nodes and the pool bounds how many run at once).
 */
import type pg from 'pg';

const STATS_WORK_MEM = '32MB';

export async function inStatsSnapshot<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  await client.query(
    `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL jit = off; SET LOCAL work_mem = '${STATS_WORK_MEM}';
    LOCK TABLE spans, metric_points IN ACCESS SHARE MODE`,
  );
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
