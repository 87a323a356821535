/**
 * Compiles an AggregateQuery into one SQL statement for DuckDB or PostgreSQL (they differ in
 * integer division, casts, the percentile function and the semi-join). Identifiers come only from the
 * whitelists below; every value is a numbered parameter. Per-group totals and per-bucket rows come
 * from one scan through GROUPING SETS.
 */
import type { AggregateQuery, AggregateRow, Dimension, Measure, SpanFilter } from './trace-port.ts';

export type SqlDialect = 'duckdb' | 'postgres';

export const COLUMN: Record<Dimension, string> = {
  harness: 'harness',
  skill: 'skill',
  skill_version: 'skill_version',
  command: 'command',
  mcp: 'mcp',
  tool: 'tool',
  model: 'model',
  user: 'user_id',
};

const INVOCATION = "category = 'skill_invocation'";

/** The SQL of each measure in a dialect; exact percentiles are nearest-rank in both. */
export function measureSql(m: Measure, dialect: SqlDialect): string {
  const dbl = dialect === 'duckdb' ? 'DOUBLE' : 'double precision';
  const errorRate = `COUNT(*) FILTER (WHERE ${INVOCATION} AND is_error)::${dbl} / NULLIF(COUNT(*) FILTER (WHERE ${INVOCATION}), 0)`;
  const percentile = (q: number) => dialect === 'duckdb'
    ? `quantile_disc(duration_ms, ${q}) FILTER (WHERE ${INVOCATION})`
    : `percentile_disc(${q}) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE ${INVOCATION})`;
  switch (m) {
    case 'sessions': return 'COUNT(DISTINCT session_id)';
    case 'traces': return 'COUNT(DISTINCT trace_id)';
    case 'spans': return 'COUNT(*)';
    case 'skill_invocations': return `COUNT(*) FILTER (WHERE ${INVOCATION})`;
    case 'tool_calls': return "COUNT(*) FILTER (WHERE category = 'tool_call')";
    case 'tokens': return 'COALESCE(SUM(tokens), 0)';
    case 'active_users': return 'COUNT(DISTINCT user_id)';
    case 'error_rate': return errorRate;
    case 'success_rate': return `1 - ${errorRate}`;
    case 'tokens_per_trace': return `COALESCE(SUM(tokens), 0)::${dbl} / NULLIF(COUNT(DISTINCT trace_id), 0)`;
    case 'cost': return `COALESCE(SUM(cost), 0)::${dbl}`;
    case 'latency_p50': return percentile(0.5);
    case 'latency_p90': return percentile(0.9);
    case 'latency_p99': return percentile(0.99);
  }
}

/** Bucket start in Unix seconds: UTC days, or ISO weeks (Monday; 1970-01-01 was a Thursday, hence +3). */
export function bucketSql(bucket: 'day' | 'week', dialect: SqlDialect): string {
  const day = dialect === 'duckdb' ? '(start_s // 86400)' : '(start_s / 86400)';
  return bucket === 'day' ? `${day} * 86400` : `(${day} - ((${day} + 3) % 7)) * 86400`;
}

export interface CompiledAggregate {
  sql: string;
  params: (string | number)[];
}

function filterSql(f: SpanFilter, param: (v: string | number) => string): string {
  const col = COLUMN[f.key];
  switch (f.op) {
    case 'exists':
      return `${col} IS NOT NULL`;
    case 'not_exists':
      return `${col} IS NULL`;
    case 'eq':
      return `${col} = ${param(f.values[0] as string | number)}`;
    case 'neq':
      return `(${col} IS NULL OR ${col} <> ${param(f.values[0] as string | number)})`;
    case 'in':
      return f.values.length === 0 ? 'FALSE' : `${col} IN (${f.values.map(param).join(', ')})`;
  }
}

export function compileAggregate(q: AggregateQuery, dialect: SqlDialect = 'duckdb'): CompiledAggregate {
  const params: (string | number)[] = [];
  const param = (v: string | number) => {
    params.push(v);
    return `$${params.length}`;
  };
  const skillWhere = [`org_id = ${param(q.orgId)}`, `skill = ${param(q.skill)}`];
  if (q.skillVersion !== undefined) skillWhere.push(`skill_version = ${param(q.skillVersion)}`);
  const where = [
    `org_id = ${param(q.orgId)}`,
    `start_s >= ${param(q.startS)}`,
    `start_s < ${param(q.endS)}`,
    q.workspaceIds.length === 0 ? 'FALSE' : `workspace_id IN (${q.workspaceIds.map(param).join(', ')})`,
    ...q.filters.map((f) => filterSql(f, param)),
  ];
  const dims = q.groupBy.map((d) => `${COLUMN[d]} AS "g_${d}"`);
  const dimCols = q.groupBy.map((d) => COLUMN[d]);
  const measures = [...new Set(q.measures)].map((m) => `${measureSql(m, dialect)} AS "m_${m}"`);
  const select = [...dims];
  let groupBy = dimCols.length > 0 ? `GROUP BY ${dimCols.join(', ')}` : '';
  if (q.bucket !== undefined) {
    select.push(`${bucketSql(q.bucket, dialect)} AS "bucket"`);
    const withBucket = [...dimCols, bucketSql(q.bucket, dialect)].join(', ');
    groupBy = `GROUP BY GROUPING SETS ((${withBucket}), (${dimCols.join(', ')}))`;
  }
  select.push(...measures);
  const skillTraces = `SELECT DISTINCT trace_id FROM trace_skills WHERE ${skillWhere.join(' AND ')}`;
  const sql = dialect === 'duckdb'
    ? `WITH skill_traces AS (${skillTraces})
SELECT ${select.join(', ')}
FROM spans SEMI JOIN skill_traces USING (trace_id)
WHERE ${where.join(' AND ')}
${groupBy}`
    : `SELECT ${select.join(', ')}
FROM spans
WHERE trace_id IN (${skillTraces}) AND ${where.join(' AND ')}
${groupBy}`;
  return { sql, params };
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Result rows of a compiled aggregate (any dialect; numbers may arrive as bigint or text). */
export function toAggregateRows(rows: Record<string, unknown>[], query: AggregateQuery): AggregateRow[] {
  return rows.map((r) => {
    const groups: AggregateRow['groups'] = {};
    for (const d of query.groupBy) {
      const v = r[`g_${d}`];
      groups[d] = v === null || v === undefined ? null : d === 'skill_version' ? Number(v) : String(v);
    }
    const values: AggregateRow['values'] = {};
    for (const m of query.measures) values[m] = num(r[`m_${m}`]);
    return { groups, bucket: query.bucket === undefined ? null : num(r.bucket), values };
  });
}
