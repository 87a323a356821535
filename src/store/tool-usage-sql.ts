/**
 * The SQL of {@link TraceStore.toolUsage} for both engines: the tool_call spans of the scope joined
 * with the (group, tool, server) entries, one row per group. The entries are bound as parameters of
 * a VALUES list; an engine that stores dimension values as codes passes codes (`encode`), and an
 * entry whose value no span has is dropped before (it cannot match).
 */
import type { SqlDialect } from './sql-dialect.ts';
import type { ToolUsageQuery } from './trace-port.ts';
import { sqlNumber } from './sql-values.ts';
import type { ToolUsageRow } from './trace-port.ts';

export interface ToolUsageEntry {
  group: number;
  tool: string | number;
  server: string | number | null;
}

/** Null when no entry is left (no span can match: the answer is empty). */
export function compileToolUsage(
  q: ToolUsageQuery,
  entries: readonly ToolUsageEntry[],
  dialect: SqlDialect,
  valueType: string,
): { sql: string; params: (string | number | null)[] } | null {
  if (entries.length === 0 || q.workspaceIds.length === 0) return null;
  const params: (string | number | null)[] = [];
  const param = (v: string | number | null) => {
    params.push(v);
    return `$${params.length}`;
  };
  const rows = entries.map(
    (e) => `(${param(e.group)}::INTEGER, ${param(e.tool)}::${valueType}, ${param(e.server)}::${valueType})`,
  );
  const where = [
    `s.org_id = ${param(q.orgId)}`,
    "s.category = 'tool_call'",
    dialect.inList('s.workspace_id', q.workspaceIds.map(param).join(', ')),
    ...(q.sinceS !== null ? [`s.start_s >= ${param(q.sinceS)}`] : []),
  ];
  const sql = `SELECT t.g AS g, COUNT(*) AS calls, COUNT(*) FILTER (WHERE s.is_error) AS errors,
  ${dialect.percentile(0.95, 's.duration_ms')} AS p95, MAX(s.start_s) AS last_s
FROM spans s JOIN (VALUES ${rows.join(', ')}) AS t(g, tool, server)
  ON s.tool = t.tool AND ${dialect.same('s.mcp', 't.server', valueType.startsWith('INT') ? '-1' : "''")}
WHERE ${where.join(' AND ')}
GROUP BY t.g ORDER BY t.g`;
  return { sql, params };
}

export function toToolUsageRows(rows: Record<string, unknown>[]): ToolUsageRow[] {
  return rows.map((r) => ({
    group: sqlNumber(r.g),
    calls: sqlNumber(r.calls),
    errors: sqlNumber(r.errors),
    p95LatencyMs: sqlNumber(r.p95),
    lastCalledS: sqlNumber(r.last_s),
  }));
}
