/**
 * The PostgreSQL trace store's watermark (TraceStore.watermark): the `trace_writes` sequence
 * (traces migration 010), which every replica moves after each write (a sequence: no row for
 * writers to wait on).
 */
import type pg from 'pg';

/**
 * `write`, after which the watermark moves, committed or not, duplicates only or not: a resend
 * of a write whose move was lost still moves it. A failed move is let go; the next write of any
 * replica moves it.
 */
export async function movingWatermark<T>(pool: pg.Pool, write: Promise<T>): Promise<T> {
  try {
    return await write;
  } finally {
    await pool.query(`SELECT nextval('trace_writes')`).catch(() => undefined);
  }
}

export async function readWatermark(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ last_value: string; is_called: boolean }>(
    'SELECT last_value, is_called FROM trace_writes',
  );
  return `p${rows[0]?.last_value ?? ''}${rows[0]?.is_called === true ? '' : '-'}`;
}
