/**
 * Compiles an AggregateQuery into one DuckDB statement. Identifiers come only from the
 * whitelists below; every value is a numbered parameter. Per-group totals and per-bucket rows come
 * from one scan through GROUPING SETS.
 */
import type { AggregateQuery, Dimension, Measure, SpanFilter } from '../trace-port.ts';

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
const ERROR_RATE = `COUNT(*) FILTER (WHERE ${INVOCATION} AND is_error)::DOUBLE / NULLIF(COUNT(*) FILTER (WHERE ${INVOCATION}), 0)`;

export const MEASURE_SQL: Record<Measure, string> = {
  sessions: 'COUNT(DISTINCT session_id)',
  traces: 'COUNT(DISTINCT trace_id)',
  spans: 'COUNT(*)',
  skill_invocations: `COUNT(*) FILTER (WHERE ${INVOCATION})`,
  tool_calls: "COUNT(*) FILTER (WHERE category = 'tool_call')",
  tokens: 'COALESCE(SUM(tokens), 0)',
  active_users: 'COUNT(DISTINCT user_id)',
  error_rate: ERROR_RATE,
  success_rate: `1 - ${ERROR_RATE}`,
  tokens_per_trace: 'COALESCE(SUM(tokens), 0)::DOUBLE / NULLIF(COUNT(DISTINCT trace_id), 0)',
  cost: 'COALESCE(SUM(cost), 0)::DOUBLE',
  latency_p50: `quantile_disc(duration_ms, 0.5) FILTER (WHERE ${INVOCATION})`,
  latency_p90: `quantile_disc(duration_ms, 0.9) FILTER (WHERE ${INVOCATION})`,
  latency_p99: `quantile_disc(duration_ms, 0.99) FILTER (WHERE ${INVOCATION})`,
};

export const BUCKET_SQL = {
  day: '(start_s // 86400) * 86400',
  // ISO weeks start on Monday; 1970-01-01 was a Thursday, hence the +3.
  week: '((start_s // 86400) - (((start_s // 86400) + 3) % 7)) * 86400',
} as const;

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

export function compileAggregate(q: AggregateQuery): CompiledAggregate {
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
  const measures = [...new Set(q.measures)].map((m) => `${MEASURE_SQL[m]} AS "m_${m}"`);
  const select = [...dims];
  let groupBy = dimCols.length > 0 ? `GROUP BY ${dimCols.join(', ')}` : '';
  if (q.bucket !== undefined) {
    select.push(`${BUCKET_SQL[q.bucket]} AS "bucket"`);
    const withBucket = [...dimCols, BUCKET_SQL[q.bucket]].join(', ');
    groupBy = `GROUP BY GROUPING SETS ((${withBucket}), (${dimCols.join(', ')}))`;
  }
  select.push(...measures);
  const sql = `WITH skill_traces AS (SELECT DISTINCT trace_id FROM trace_skills WHERE ${skillWhere.join(' AND ')})
SELECT ${select.join(', ')}
FROM spans SEMI JOIN skill_traces USING (trace_id)
WHERE ${where.join(' AND ')}
${groupBy}`;
  return { sql, params };
}
