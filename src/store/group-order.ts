/**
 * The one order of statistics groups every engine and the reference keep (trace-port.ts
 * GroupRanking): values ascending with nulls last, text by Unicode code point.
 */
import type { Dimension, GroupValues } from './trace-port.ts';

/** Text by Unicode code point (PostgreSQL `COLLATE "C"`, DuckDB's binary order of UTF-8). */
function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** A value of a dimension or measure in ascending order, nulls last. */
export function compareValues(a: string | number | null | undefined, b: string | number | null | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : 1;
  return compareText(String(a), String(b));
}

/** The tie-break of every ranking: group values in groupBy order, each ascending, nulls last. */
export function compareGroups(a: GroupValues, b: GroupValues, dims: readonly Dimension[]): number {
  for (const d of dims) {
    const c = compareValues(a[d], b[d]);
    if (c !== 0) return c;
  }
  return 0;
}
