/** The result rows of a compiled statistics statement as the TraceStore port answers them. */
import type { AggregateQuery, AggregateRow, Dimension } from '../trace-port.ts';
import { sqlText } from '../sql-values.ts';

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * Result rows of a compiled aggregate (any dialect; numbers may arrive as bigint or text); `decode`
 * turns an encoded group value back into the dimension's value.
 */
export function toAggregateRows(
  rows: Record<string, unknown>[],
  query: AggregateQuery,
  decode?: (dim: Dimension, stored: unknown) => string,
): AggregateRow[] {
  return rows.map((r) => {
    const groups: AggregateRow['groups'] = {};
    for (const d of query.groupBy) {
      const v = r[`g_${d}`];
      groups[d] =
        v === null || v === undefined
          ? null
          : d === 'skill_version'
            ? Number(v)
            : decode !== undefined
              ? decode(d, v)
              : sqlText(v);
    }
    const values: AggregateRow['values'] = {};
    for (const m of query.measures) values[m] = num(r[`m_${m}`]);
    return { groups, bucket: query.bucket === undefined ? null : num(r.bucket), values };
  });
}
