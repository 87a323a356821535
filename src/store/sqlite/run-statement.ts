import type { DatabaseSync } from 'node:sqlite';
import { StoreUnavailableError } from '../registry-port.ts';

/**
 * Runs `statement` on `db`: a closed database, or a failure of the database rather than of the
 * query (SQLITE_BUSY, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN), throws
 * StoreUnavailableError; any other error passes as it is.
 */
export function runStatement<T>(db: DatabaseSync, statement: () => T): T {
  if (!db.isOpen) throw new StoreUnavailableError('the registry database is closed');
  try {
    return statement();
  } catch (err) {
    const code = (err as { errcode?: number }).errcode;
    if (code !== undefined && [5, 10, 11, 13, 14].includes(code & 0xff))
      throw new StoreUnavailableError('the registry database cannot answer', { cause: err });
    throw err;
  }
}
