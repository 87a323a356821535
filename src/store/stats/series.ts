/**
 * Time series of the statistics compiler: the bucket of a row, and a grouped series' bucket rows
 * with the per-group totals (bucket null) that rank its groups. The totals are summed from the
 * bucket rows where that is exact (totalsSql), which costs less than GROUPING SETS, which
 * recompute every measure for the totals.
 */
import type { SqlDialect } from './dialect.ts';
import {
  ADDITIVE,
  DISTINCT,
  INVOCATION,
  QUANTILE,
  dbl,
  isEvaluationPart,
  isJoinedPart,
  isMetricPart,
  partSql,
  percentileSql,
  type Part,
} from './measures.ts';

/** Bucket start in Unix seconds: UTC days, or ISO weeks (Monday; 1970-01-01 was a Thursday, hence +3). */
export function bucketSql(bucket: 'day' | 'week', dialect: SqlDialect, column = 'start_s'): string {
  const day = dialect.intDiv(column, '86400');
  return bucket === 'day' ? `${day} * 86400` : `(${day} - ((${day} + 3) % 7)) * 86400`;
}

/** One row per key of the parts that the branches set, each branch setting only its own parts. */
export function combineSql(
  keys: string[],
  parts: Part[],
  branches: { from: string; keys: string[]; groupBy: string; set: (p: Part) => string | null }[],
  dialect: SqlDialect,
): string {
  const typedNull = `NULL::${dbl(dialect)}`;
  const selects = branches.map(
    (b) =>
      `SELECT ${[...b.keys, ...parts.map((p) => `${b.set(p) ?? typedNull} AS p_${p}`)].join(', ')} FROM ${b.from} ${b.groupBy}`,
  );
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.join(', ')}` : '';
  return `SELECT ${[...keys, ...parts.map((p) => `SUM(p_${p}) AS p_${p}`)].join(', ')} FROM (${selects.join('\nUNION ALL ')}) branches${groupBy}`;
}

/** The CTEs of rows joined to the groups (`mb` harness metric points, `eb` evaluations) and the parts each sets. */
function joinedRows(s: Shape): { from: string; owns: (p: Part) => boolean }[] {
  return [
    ...(s.metrics !== null ? [{ from: 'mb', owns: isMetricPart }] : []),
    ...(s.evaluations !== null ? [{ from: 'eb', owns: isEvaluationPart }] : []),
  ];
}

interface Shape {
  parts: Part[];
  groups: string[];
  dimCols: string[];
  bucket: string;
  dialect: SqlDialect;
  /** metricSelect's rows (per group and bucket) when the query asks for harness measures. */
  metrics: string | null;
  /** evaluationSelect's rows (per group and bucket) when the query asks for evaluation measures. */
  evaluations: string | null;
}

/**
 * Per-group totals of a grouped time series (bucket null), from branches summed per group:
 * - additive parts: the sums of the bucket rows;
 * - traces: the sum of the per-bucket counts, corrected for the traces that have rows in more
 *   than one bucket (few: a trace rarely crosses midnight) by subtracting their per-bucket counts
 *   and adding their distinct count, instead of a second exact distinct count over every row;
 * - sessions and users (a user is active on many days): a distinct count per group;
 * - percentiles: the group rows of `pct`;
 * - harness and evaluation measures: the sums of their bucket rows (`mb`, `eb`: a point or an
 *   evaluation is in one bucket).
 */
function totalsSql(s: Shape): string {
  const only = (part: Part, sql: string) => (p: Part) => (p === part ? sql : null);
  const additive = s.parts.filter((p) => ADDITIVE.has(p) || p === 'traces');
  const distinct = s.parts.filter((p) => DISTINCT.has(p) && p !== 'traces');
  const byGroup = `GROUP BY ${s.dimCols.join(', ')}`;
  const dimSelect = s.dimCols.map((c, i) => `${c} AS ${s.groups[i]}`);
  const crossingRows = 'base WHERE trace_key IN (SELECT trace_key FROM crossing)';
  const groupsBy = `GROUP BY ${s.groups.join(', ')}`;
  return combineSql(
    s.groups,
    s.parts,
    [
      { from: 'gb', keys: s.groups, groupBy: groupsBy, set: (p) => (additive.includes(p) ? `SUM(p_${p})` : null) },
      ...(s.parts.includes('traces')
        ? [
            {
              from: `(SELECT ${dimSelect.join(', ')}, COUNT(DISTINCT trace_key) AS n FROM ${crossingRows} GROUP BY ${s.dimCols.join(', ')}, ${s.bucket}) per_bucket`,
              keys: s.groups,
              groupBy: groupsBy,
              set: only('traces', `-SUM(n)::${dbl(s.dialect)}`),
            },
            {
              from: crossingRows,
              keys: dimSelect,
              groupBy: byGroup,
              set: only('traces', partSql('traces', s.dialect)),
            },
          ]
        : []),
      ...(distinct.length > 0
        ? [
            {
              from: 'base',
              keys: dimSelect,
              groupBy: byGroup,
              set: (p: Part) => (distinct.includes(p) ? partSql(p, s.dialect) : null),
            },
          ]
        : []),
      ...joinedRows(s).map(({ from, owns }) => ({
        from,
        keys: s.groups,
        groupBy: groupsBy,
        set: (p: Part) => (owns(p) ? `SUM(p_${p})` : null),
      })),
      ...(s.parts.some((p) => QUANTILE[p] !== undefined)
        ? [
            {
              from: 'pct WHERE bucket IS NULL',
              keys: s.groups,
              groupBy: '',
              set: (p: Part) => (QUANTILE[p] !== undefined ? `p_${p}` : null),
            },
          ]
        : []),
    ],
    s.dialect,
  );
}

/**
 * A grouped time series: bucket rows and per-group totals. Percentiles come from one pass over
 * the invocation rows with GROUPING SETS (bucket and total at once); everything else per bucket
 * from `gb`, and the totals from totalsSql.
 */
export function groupedSeriesSql(s: Shape, base: string, reuse: string, crossing: string): string {
  const quantiles = s.parts.filter((p) => QUANTILE[p] !== undefined);
  const others = s.parts.filter((p) => QUANTILE[p] === undefined && !isJoinedPart(p));
  const keys = [...s.dimCols.map((c, i) => `${c} AS ${s.groups[i]}`), `${s.bucket} AS bucket`];
  const gb = `SELECT ${[...keys, ...others.map((p) => `${partSql(p, s.dialect)} AS p_${p}`)].join(', ')} FROM base GROUP BY ${[...s.dimCols, s.bucket].join(', ')}`;
  const pct = `SELECT ${[...keys, ...quantiles.map((p) => `(${percentileSql(QUANTILE[p] as number, s.dialect, false)})::${dbl(s.dialect)} AS p_${p}`)].join(', ')}
FROM base WHERE ${INVOCATION} GROUP BY GROUPING SETS ((${[...s.dimCols, s.bucket].join(', ')}), (${s.dimCols.join(', ')}))`;
  const bucketKeys = [...s.groups, 'bucket'];
  const bucketRows = combineSql(
    bucketKeys,
    s.parts,
    [
      { from: 'gb', keys: bucketKeys, groupBy: '', set: (p) => (others.includes(p) ? `p_${p}` : null) },
      ...(quantiles.length > 0
        ? [
            {
              from: 'pct WHERE bucket IS NOT NULL',
              keys: bucketKeys,
              groupBy: '',
              set: (p: Part) => (quantiles.includes(p) ? `p_${p}` : null),
            },
          ]
        : []),
      ...joinedRows(s).map(({ from, owns }) => ({
        from,
        keys: bucketKeys,
        groupBy: '',
        set: (p: Part) => (owns(p) ? `p_${p}` : null),
      })),
    ],
    s.dialect,
  );
  return `WITH base AS ${reuse} (${base}),
gb AS MATERIALIZED (${gb})${quantiles.length > 0 ? `,\npct AS MATERIALIZED (${pct})` : ''}${s.metrics !== null ? `,\nmb AS MATERIALIZED (${s.metrics})` : ''}${s.evaluations !== null ? `,\neb AS MATERIALIZED (${s.evaluations})` : ''}${s.parts.includes('traces') ? `,\ncrossing AS MATERIALIZED (${crossing})` : ''}
SELECT ${[...bucketKeys, ...s.parts.map((p) => `p_${p}`)].join(', ')} FROM (${bucketRows}) bucket_rows
UNION ALL SELECT ${[...s.groups, 'NULL AS bucket', ...s.parts.map((p) => `p_${p}`)].join(', ')} FROM (${totalsSql(s)}) totals`;
}
