/**
 * The harness measures of a statistics query (lines added, commits, active time…): summed from
 * the metric points of the sessions of each group's rows, not from the span rows.
 */
import type { AggregateQuery, HarnessMeasure } from '../trace-port.ts';
import type { Param, SqlDialect } from './dialect.ts';
import { inListSql } from './filters.ts';
import { dbl } from './measures.ts';

/**
 * The harness metric parts per group (and bucket, by each point's own time), as p_<part> columns
 * under the output key names. A point counts for a group when its (workspace, session) is one of
 * the group's selected rows (`base`) anywhere in the range: a caller who may write to one workspace
 * cannot add to the sessions of another. Points of another organization, of a workspace outside
 * the query's or outside [start, end) never count.
 */
export function metricSelect(
  q: AggregateQuery,
  parts: readonly HarnessMeasure[],
  dimCols: readonly string[],
  groups: readonly string[],
  bucket: string | null,
  param: Param,
  dialect: SqlDialect,
): string {
  const points = `SELECT workspace_id AS metric_workspace, session_id AS metric_session, time_s AS start_s, metric, value AS metric_value FROM metric_points
WHERE org_id = ${param(q.orgId)} AND time_s >= ${param(q.startS)} AND time_s < ${param(q.endS)} AND ${inListSql('workspace_id', q.workspaceIds, param, dialect)}`;
  const sessions = `SELECT DISTINCT ${[...dimCols, 'workspace_id', 'session_id'].join(', ')} FROM base WHERE session_id IS NOT NULL`;
  const keyCols = [...dimCols.map((c) => `gs.${c}`), ...(bucket === null ? [] : [bucket])];
  const keys = [
    ...dimCols.map((c, i) => `gs.${c} AS ${groups[i]}`),
    ...(bucket === null ? [] : [`${bucket} AS bucket`]),
  ];
  // Part names come from HARNESS_MEASURES, never from the request.
  const sums = parts.map(
    (p) => `(COALESCE(SUM(metric_value) FILTER (WHERE metric = '${p}'), 0))::${dbl(dialect)} AS p_${p}`,
  );
  return `SELECT ${[...keys, ...sums].join(', ')} FROM (${sessions}) gs JOIN (${points}) mp ON mp.metric_workspace = gs.workspace_id AND mp.metric_session = gs.session_id${keyCols.length > 0 ? ` GROUP BY ${keyCols.join(', ')}` : ''}`;
}
