/**
 * The predicates of a statistics query over the span columns every row source applies: time
 * range, workspaces and the query's filters, each value a numbered parameter (a dictionary code
 * where the engine stores codes).
 */
import type { AggregateQuery, Dimension, SpanFilter } from '../trace-port.ts';
import type { Param, SqlDialect } from './dialect.ts';
import { DIMENSION_COLUMN, isSpanDimension, type RowSource } from './row-source.ts';

/** `col IN (values)`, as the dialect writes it. */
export function inListSql(
  col: string,
  values: readonly (string | number)[],
  param: Param,
  dialect: SqlDialect,
): string {
  if (values.length === 0) return 'FALSE';
  const placeholders = values.map(param).join(', ');
  return dialect.inList(col, placeholders);
}

/** `f` as a predicate over `col`, each value bound as `encode` stores it. */
export function filterSql(
  f: SpanFilter,
  col: string,
  param: Param,
  dialect: SqlDialect,
  encode: (v: string | number) => string | number = (v) => v,
): string {
  switch (f.op) {
    case 'exists':
      return `${col} IS NOT NULL`;
    case 'not_exists':
      return `${col} IS NULL`;
    case 'eq':
      return `${col} = ${param(encode(f.values[0] as string | number))}`;
    case 'neq':
      return `(${col} IS NULL OR ${col} <> ${param(encode(f.values[0] as string | number))})`;
    case 'in':
      return inListSql(col, f.values.map(encode), param, dialect);
  }
}

/** The stored value of a dimension value: its code when the source encodes the dimension. */
export const storedValue = (source: RowSource, dim: Dimension, v: string | number): string | number =>
  source.codes?.(dim)?.encode(v) ?? v;

/**
 * The predicate every source applies to its span columns: time range (unless `time` is false: a
 * summed query bounds its rollups by days), workspaces, the filters on span dimensions (those on
 * `evaluation` select evaluations: evaluations.ts), and `extra` (the rows of onlyGroups, when they
 * can be narrowed before aggregating).
 */
export function commonWhere(
  q: AggregateQuery,
  source: RowSource,
  param: Param,
  dialect: SqlDialect,
  extra: (() => string) | null,
  time = true,
): string {
  return [
    ...(time ? [`start_s >= ${param(q.startS)}`, `start_s < ${param(q.endS)}`] : []),
    inListSql('workspace_id', q.workspaceIds, param, dialect),
    ...q.filters.flatMap((f) =>
      isSpanDimension(f.key)
        ? [filterSql(f, DIMENSION_COLUMN[f.key], param, dialect, (v) => storedValue(source, f.key, v))]
        : [],
    ),
    ...(extra === null ? [] : [extra()]),
  ].join(' AND ');
}
