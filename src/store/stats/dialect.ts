/**
 * What the statistics compiler (the files of this folder) writes differently per engine, in one
 * small object per dialect instead of `dialect === 'duckdb'` branches. Everything else of the
 * compiled SQL is common; test/store/stats-compile.test.ts shows both dialects' output for a
 * reviewer.
 */
/**
 * Adds a value to the statement's parameters and returns its placeholder (`$1`, `$2`, … in both
 * dialects). Declared in this leaf module so that every file of the compiler binds values without
 * importing the entry point (compile.ts imports ranking.ts, which binds values too).
 */
export type Param = (value: string | number) => string;

/** A statement's parameters and the binder that numbers them (`$1`, `$2`, … in bind order). */
export function numberedParams<V = string | number>(): { params: V[]; param: (value: V) => string } {
  const params: V[] = [];
  return {
    params,
    param: (value) => {
      params.push(value);
      return `$${params.length}`;
    },
  };
}

export interface SqlDialect {
  readonly name: 'duckdb' | 'postgres';
  /** The double-precision type (every branch of a UNION is cast to it). */
  readonly double: string;
  /** The text type of temporary columns. */
  readonly text: string;
  /** Integer division of non-negative integers. */
  intDiv(a: string, b: string): string;
  /** Exact nearest-rank percentile `q` of `column` (an aggregate). */
  percentile(q: number, column: string): string;
  /** `column` is one of the bound `placeholders` (a comma-separated list, never empty). */
  inList(column: string, placeholders: string): string;
  /** Null-safe equality a hash join can use; `none` is a placeholder value of the column's type. */
  same(a: string, b: string, none: string): string;
  /** Appended to a text sort column so that text orders by code point. */
  readonly textOrder: string;
  /**
   * Whether the engine drops the columns of a materialized source that the aggregation never
   * reads; where it does not, the compiler keeps only those (compile.ts `compileAggregate`).
   */
  readonly prunesColumns: boolean;
}

export const DUCKDB: SqlDialect = {
  name: 'duckdb',
  double: 'DOUBLE',
  text: 'VARCHAR',
  intDiv: (a, b) => `(${a} // ${b})`,
  percentile: (q, column) => `quantile_disc(${column}, ${q})`,
  // DuckDB plans an IN list as a hash join over the rows; list_contains over a list of the same
  // parameters tests each row in place (13 ms -> 6 ms on 670,000 rows).
  inList: (column, placeholders) => `list_contains([${placeholders}], ${column})`,
  same: (a, b) => `${a} IS NOT DISTINCT FROM ${b}`,
  textOrder: '',
  prunesColumns: true,
};

export const POSTGRES: SqlDialect = {
  name: 'postgres',
  double: 'double precision',
  text: 'TEXT',
  intDiv: (a, b) => `(${a} / ${b})`,
  percentile: (q, column) => `percentile_disc(${q}) WITHIN GROUP (ORDER BY ${column})`,
  inList: (column, placeholders) => `${column} IN (${placeholders})`,
  // PostgreSQL does not hash IS NOT DISTINCT FROM: (is null, value or a placeholder) instead.
  same: (a, b, none) => `(${a} IS NULL) = (${b} IS NULL) AND COALESCE(${a}, ${none}) = COALESCE(${b}, ${none})`,
  textOrder: ' COLLATE "C"',
  // A MATERIALIZED CTE keeps every column of its rows, the filters' dimensions included.
  prunesColumns: false,
};
