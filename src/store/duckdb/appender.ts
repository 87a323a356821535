/**
 * The one way rows reach a DuckDB table through an appender: column-wise, one DataChunk per
 * CHUNK_ROWS rows (a chunk holds at most DuckDB's vector size, 2,048 rows; one native call per
 * chunk and column instead of one per value), and the appender always closed. On a failure its
 * buffered rows are dropped before it closes: an appender left to the garbage collector flushes
 * them when it is collected, on its connection and in whatever transaction is open there then,
 * so rows of an append that failed and was rolled back would be stored after all, and from a
 * finalizer that may run while the connection executes another statement.
 */
import { DuckDBDataChunk, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

/** Rows per DataChunk: DuckDB's vector size, the most a chunk holds. */
const CHUNK_ROWS = 2048;

/** Each column of a table in order: its type, and its value of a row. */
export type Layout<T> = readonly (readonly [DuckDBType, (row: T) => DuckDBValue])[];

/** Where rows go: a table of the database, or a temporary one (`temp`). */
export interface AppendTarget {
  table: string;
  temp?: boolean;
}

/** Appends `rows` to `target` in `layout`'s columns; nothing is left buffered, whatever happens. */
export async function appendRows<T>(
  conn: DuckDBConnection,
  target: AppendTarget,
  layout: Layout<T>,
  rows: readonly T[],
): Promise<void> {
  if (rows.length === 0) return;
  const appender =
    target.temp === true
      ? await conn.createAppender(target.table, 'main', 'temp')
      : await conn.createAppender(target.table);
  const types = layout.map(([type]) => type);
  try {
    for (let at = 0; at < rows.length; at += CHUNK_ROWS) {
      const slice = rows.slice(at, at + CHUNK_ROWS);
      const chunk = DuckDBDataChunk.create(types, slice.length);
      chunk.setColumns(layout.map(([, get]) => slice.map(get)));
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } catch (err) {
    try {
      appender.clear();
      appender.closeSync();
    } catch {
      // The failure that brought us here is the one to report.
    }
    throw err;
  }
  appender.closeSync();
}
