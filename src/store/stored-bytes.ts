/**
 * What a store holds on disk, by part, for the `/metrics` gauges (observability/stored-bytes.ts):
 * for the embedded engines a database file and its write-ahead log, for PostgreSQL each table with
 * its indexes, TOAST and partitions. Cheap by contract: file sizes or catalog sizes, never a scan.
 */
import fs from 'node:fs/promises';

/** Bytes by part name (`file`, `wal`, or a table name). */
export type StoredBytes = Record<string, number>;

/** A file's size, 0 when it does not exist (a WAL exists only between checkpoints). */
async function sizeOf(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).size;
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return 0;
    throw err;
  }
}

/**
 * A database file and its write-ahead log (`walFile`): DuckDB `x.duckdb` + `x.duckdb.wal`, SQLite
 * `x.sqlite` + `x.sqlite-wal`. An in-memory database (no file) holds nothing on disk.
 */
export async function databaseFileBytes(file: string | null, walFile: (file: string) => string): Promise<StoredBytes> {
  if (file === null || file === '' || file === ':memory:') return {};
  const [main, wal] = await Promise.all([sizeOf(file), sizeOf(walFile(file))]);
  return { file: main, wal };
}
