/**
 * Keeping only the groups an answer can show, inside the statistics SQL (AggregateQuery `top` and
 * `onlyGroups`, DESIGN §12): the rows an engine hands back stay bounded however many distinct
 * values its spans hold. Used by compile.ts for both dialects; identifiers come from the
 * compiler's whitelists, every value is a numbered parameter.
 *
 * A ranking keeps the first `limit` groups of one total order, the same in every engine
 * (trace-port.ts): the ranked value in its direction, NULLS LAST either way, then each group value
 * ascending, NULLS LAST, text by code point (PostgreSQL `COLLATE "C"`, DuckDB's binary VARCHAR
 * order; an engine that stores codes sorts by the decoded text). It runs over one row per group
 * only: the group rows of a table, the total rows (bucket null) of a time series, whose kept
 * groups then keep every bucket row by a join on the group values.
 */
import { MEASURES, type Dimension, type GroupRanking, type GroupValues, type Measure } from '../trace-port.ts';
import type { Param, SqlDialect } from './dialect.ts';

/** What the ranking SQL needs to know of the query's group dimensions, as compiled. */
export interface GroupColumns {
  dialect: SqlDialect;
  groupBy: readonly Dimension[];
  param: Param;
  /** The SQL type of a group column as stored (codes are integers). */
  type(dim: Dimension): 'integer' | 'text';
  /** The stored value of a group value (a code, for an engine that encodes the dimension). */
  encode(dim: Dimension, value: string | number): string | number;
  /** SQL of the value the stored column `column` sorts by (the decoded text of a code). */
  sortKey(dim: Dimension, column: string): string;
  /** `column IN (values)`, as the compiler writes it for the dialect. */
  inList(column: string, values: readonly (string | number)[]): string;
}

const isMeasure = (by: Measure | Dimension): by is Measure => (MEASURES as readonly string[]).includes(by);
const groupCol = (d: Dimension) => `"g_${d}"`;
const sortCol = (d: Dimension) => `"s_${d}"`;

/** The per-dimension lists of onlyGroups' stored values, and whether null is among them. */
function valuesByDimension(
  only: readonly GroupValues[],
  c: GroupColumns,
): Map<Dimension, { values: (string | number)[]; withNull: boolean }> {
  const out = new Map<Dimension, { values: (string | number)[]; withNull: boolean }>();
  for (const d of c.groupBy) {
    const seen = new Map<string, string | number>();
    let withNull = false;
    for (const g of only) {
      const v = g[d];
      if (v === null || v === undefined) withNull = true;
      else seen.set(`${typeof v}:${v}`, c.encode(d, v));
    }
    out.set(d, { values: [...seen.values()], withNull });
  }
  return out;
}

/**
 * A predicate over span columns (`column(dim)`) that every row of the listed groups meets: each
 * group dimension's value is among the listed ones (null when a listed group has null). Exact for
 * one dimension; with several it narrows the rows before aggregating and onlyGroupsSql decides.
 */
export function onlyGroupsRowsSql(
  only: readonly GroupValues[],
  column: (d: Dimension) => string,
  c: GroupColumns,
): string {
  if (only.length === 0) return 'FALSE';
  return [...valuesByDimension(only, c)]
    .map(([d, { values, withNull }]) => {
      const col = column(d);
      if (values.length === 0) return `${col} IS NULL`;
      return withNull ? `(${c.inList(col, values)} OR ${col} IS NULL)` : c.inList(col, values);
    })
    .join(' AND ');
}

/** The predicate over result rows (alias `r`) of exactly the listed groups, null-safe on every dimension. */
function onlyGroupsSql(only: readonly GroupValues[], c: GroupColumns): string {
  if (c.groupBy.length === 1 || only.length === 0) return onlyGroupsRowsSql(only, (d) => `r.${groupCol(d)}`, c);
  const sqlType = (d: Dimension) => (c.type(d) === 'integer' ? 'INTEGER' : c.dialect.text);
  const tuples = only.map(
    (g) =>
      `(${c.groupBy
        .map((d) => {
          const v = g[d];
          return `CAST(${v === null || v === undefined ? 'NULL' : c.param(c.encode(d, v))} AS ${sqlType(d)})`;
        })
        .join(', ')})`,
  );
  const names = c.groupBy.map(groupCol).join(', ');
  return `EXISTS (SELECT 1 FROM (VALUES ${tuples.join(', ')}) AS o(${names}) WHERE ${c.groupBy.map((d) => sameSql(`o.${groupCol(d)}`, `r.${groupCol(d)}`, d, c)).join(' AND ')})`;
}

/** Null-safe equality a hash join can use (see SqlDialect.same). */
function sameSql(a: string, b: string, d: Dimension, c: GroupColumns): string {
  return c.dialect.same(a, b, c.type(d) === 'integer' ? '0' : "''");
}

/** An ORDER BY term on a sort column: text by code point in PostgreSQL. */
function orderTerm(d: Dimension, direction: 'ASC' | 'DESC', c: GroupColumns): string {
  const collate = c.type(d) === 'text' ? c.dialect.textOrder : '';
  return `${sortCol(d)}${collate} ${direction} NULLS LAST`;
}

/** The total order of one ranking: its value, then the group values (trace-port.ts GroupRanking). */
function rankingOrder(r: GroupRanking, c: GroupColumns): string {
  const direction = r.direction === 'desc' ? 'DESC' : 'ASC';
  // A dimension outside group_by has one value (none) for every group: the tie-break decides.
  const value = isMeasure(r.by)
    ? [`"m_${r.by}" ${direction} NULLS LAST`]
    : c.groupBy.includes(r.by)
      ? [orderTerm(r.by, direction, c)]
      : [];
  return [...value, ...c.groupBy.map((d) => orderTerm(d, 'ASC', c))].join(', ');
}

/**
 * The groups (their g_<dim> columns) that rank within a limit of at least one ranking, over
 * `keyed`: one row per group with the ranked measures and the sort columns s_<dim>. Each ranking
 * is an ORDER BY over its total order with LIMIT, which both engines run as a top-N heap (a
 * ROW_NUMBER window would sort every group: 0.6 s instead of 10 ms over a million in DuckDB);
 * UNION merges the rankings, a group once.
 */
function keptSql(keyed: string, top: readonly GroupRanking[], c: GroupColumns): string {
  const groups = c.groupBy.map(groupCol).join(', ');
  return top
    .map((r) => `(SELECT ${groups} FROM ${keyed} ORDER BY ${rankingOrder(r, c)} LIMIT ${c.param(r.limit)})`)
    .join('\nUNION ');
}

/**
 * Keeps the groups of `result` (a SELECT of `columns`: the group columns g_<dim>, `bucket` when
 * `bucketed`, the measures m_<measure> including every ranked one) that `top` and `only` allow;
 * each absent means no condition. Rankings run over one row per group (a time series' total rows,
 * bucket null); a kept group keeps all its rows by a join on the group values. `only` is checked
 * here when the rows were not already narrowed to exactly those groups (onlyGroupsRowsSql).
 */
export function keepGroupsSql(
  result: string,
  columns: readonly string[],
  bucketed: boolean,
  c: GroupColumns,
  keep: { top?: readonly GroupRanking[] | undefined; only?: readonly GroupValues[] | undefined },
): string {
  const out = columns.map((col) => `r.${col}`).join(', ');
  const conditions = keep.only === undefined ? [] : [onlyGroupsSql(keep.only, c)];
  let sql: string;
  if (keep.top === undefined || keep.top.length === 0) {
    sql = `SELECT ${out} FROM (${result}) r`;
    // No ranking: no group ranks within a limit of one.
    if (keep.top !== undefined) conditions.unshift('FALSE');
  } else {
    const sortKeys = c.groupBy.map((d) => `${c.sortKey(d, groupCol(d))} AS ${sortCol(d)}`);
    const on = c.groupBy.map((d) => sameSql(`k.${groupCol(d)}`, `r.${groupCol(d)}`, d, c)).join(' AND ');
    sql = `WITH result AS MATERIALIZED (${result}),
keyed AS MATERIALIZED (SELECT *, ${sortKeys.join(', ')} FROM result${bucketed ? ' WHERE bucket IS NULL' : ''}),
kept AS (${keptSql('keyed', keep.top, c)})
SELECT ${out} FROM result r JOIN kept k ON ${on}`;
  }
  return conditions.length === 0 ? sql : `${sql}\nWHERE ${conditions.join(' AND ')}`;
}
