/** Column values as the SQL drivers hand them back (strings, numbers, bigints, booleans or null). */

/** A scalar column value as text; a non-scalar (never expected from these queries) as its JSON. */
export function sqlText(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(v);
    default:
      return v === null || v === undefined ? '' : JSON.stringify(v);
  }
}

/** A count or other integer column (bigint in PostgreSQL and DuckDB) as a number; absent as 0. */
export function sqlNumber(v: unknown): number {
  return typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string' ? Number(v) : 0;
}
