/**
 * The one way every engine finds its migrations: ordered `.sql` files of a folder, applied once
 * each and recorded by name. Files are frozen once released (a change is a new file), so editing
 * live code never rewrites a released migration. Each engine applies the pending ones in its own
 * transaction (SQLite `BEGIN IMMEDIATE`, PostgreSQL under an advisory lock, DuckDB per file).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Migration {
  /** The name recorded in the engine's migrations table. */
  name: string;
  sql: string;
}

/**
 * The migrations of `dir` not in `done`, in file-name order. `recordedAs` maps a file name to
 * the name recorded (the DuckDB store has always recorded names without `.sql`).
 */
export function pendingMigrations(
  dir: string,
  done: ReadonlySet<string>,
  recordedAs: (file: string) => string = (file) => file,
): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((file) => ({ file, name: recordedAs(file) }))
    .filter(({ name }) => !done.has(name))
    .map(({ file, name }) => ({ name, sql: fs.readFileSync(path.join(dir, file), 'utf8') }));
}
