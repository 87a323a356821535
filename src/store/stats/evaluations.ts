/**
 * The evaluation measures of a statistics query (evaluation_score, evaluation_pass_rate): counted
 * from the stored evaluations (store/evaluation-row.ts), not from the span rows. An evaluation
 * counts for a group when its (workspace, trace) is the (workspace, trace) of one of the group's
 * selected rows anywhere in the range, in the bucket of its own time; its own time must lie in
 * [start, end), its workspace among the query's, and it must meet the filters on `evaluation` (its
 * name). The `evaluation` dimension is the evaluation's name: spans have none, so a query grouped
 * by it takes its groups from the evaluations alone (and asks for evaluation measures only).
 */
import type { AggregateQuery } from '../trace-port.ts';
import type { Param, SqlDialect } from './dialect.ts';
import { filterSql, inListSql } from './filters.ts';
import { dbl, type EvaluationPart } from './measures.ts';

/** The SQL of a part over the joined evaluations (columns `score` and `passed`). */
function evaluationPartSql(p: EvaluationPart, dialect: SqlDialect): string {
  const sql = {
    eval_scored: 'COUNT(score)',
    eval_sum: 'COALESCE(SUM(score), 0)',
    eval_judged: 'COUNT(passed)',
    eval_passed: 'COUNT(*) FILTER (WHERE passed)',
  }[p];
  return `(${sql})::${dbl(dialect)}`;
}

/** Whether the query groups by the evaluation's name. */
export const groupsByEvaluation = (q: AggregateQuery): boolean => q.groupBy.includes('evaluation');

/**
 * The evaluation parts per group (and bucket, by each evaluation's own time), as p_<part> columns
 * under the output key names, over `base` (the selected rows, with `workspace_id` and `trace_key`).
 * `dimCols`/`groups`: the span dimensions' columns and their output names; with `evaluation` in
 * groupBy the evaluation's name is the `"g_evaluation"` column too. `bucket` is an expression over
 * `start_s` (here the evaluation's time).
 */
export function evaluationSelect(
  q: AggregateQuery,
  parts: readonly EvaluationPart[],
  shape: { dimCols: readonly string[]; groups: readonly string[]; bucket: string | null },
  param: Param,
  dialect: SqlDialect,
): string {
  const { dimCols, groups, bucket } = shape;
  const named = q.filters.filter((f) => f.key === 'evaluation').map((f) => filterSql(f, 'name', param, dialect));
  const evaluations = `SELECT workspace_id AS eval_workspace, trace_key AS eval_trace, name AS evaluation, time_s AS start_s, score, passed FROM evaluations
WHERE ${[
    `org_id = ${param(q.orgId)}`,
    `time_s >= ${param(q.startS)}`,
    `time_s < ${param(q.endS)}`,
    inListSql('workspace_id', q.workspaceIds, param, dialect),
    ...named,
  ].join(' AND ')}`;
  const traces = `SELECT DISTINCT ${[...dimCols, 'workspace_id', 'trace_key'].join(', ')} FROM base`;
  const byName = groupsByEvaluation(q);
  const keyCols = [
    ...dimCols.map((c) => `gt.${c}`),
    ...(byName ? ['ev.evaluation'] : []),
    ...(bucket === null ? [] : [bucket]),
  ];
  const keys = [
    ...dimCols.map((c, i) => `gt.${c} AS ${groups[i]}`),
    ...(byName ? ['ev.evaluation AS "g_evaluation"'] : []),
    ...(bucket === null ? [] : [`${bucket} AS bucket`]),
  ];
  const sums = parts.map((p) => `${evaluationPartSql(p, dialect)} AS p_${p}`);
  return `SELECT ${[...keys, ...sums].join(', ')} FROM (${traces}) gt JOIN (${evaluations}) ev ON ev.eval_workspace = gt.workspace_id AND ev.eval_trace = gt.trace_key${keyCols.length > 0 ? ` GROUP BY ${keyCols.join(', ')}` : ''}`;
}

/**
 * A query grouped by `evaluation` (its measures all evaluation measures): the groups, buckets and
 * values of evaluationSelect's rows (`eb`), with a grouped time series' totals (bucket null)
 * summed from its bucket rows, exact since an evaluation lies in one bucket.
 */
export function evaluationGroupedSql(
  parts: readonly EvaluationPart[],
  outGroups: readonly string[],
  bucketed: boolean,
): string {
  const values = parts.map((p) => `p_${p}`);
  if (!bucketed) return `SELECT ${[...outGroups, ...values].join(', ')} FROM eb`;
  const totals = parts.map((p) => `SUM(p_${p}) AS p_${p}`);
  return `SELECT ${[...outGroups, 'bucket', ...values].join(', ')} FROM eb
UNION ALL SELECT ${[...outGroups, 'NULL AS bucket', ...totals].join(', ')} FROM eb GROUP BY ${outGroups.join(', ')}`;
}
