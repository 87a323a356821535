/**
 * The SQL of {@link TraceStore.toolUsage} for both engines: the tool_call spans of the scope joined
 * with the (group, tool, server) entries, one row per group. The entries are bound as parameters of
 * a VALUES list; an engine that stores dimension values as codes passes codes (`encode`), and an
 * entry whose value no span has is dropped before (it cannot match).
 *
 * Windows: when every entry has the same window, it is one condition on the spans (the plan of a
 * single lookup); when they differ, each entry carries its own `since` into the join, and the spans
 * are still cut at the earliest window (none when an entry has none), so a whole operation's
 * lookups are one scan whatever their windows.
 *
 * {@link TraceStore.serverUsage} is the same measure per MCP server, whatever the tool: one scan of
 * the scope's tool calls whose `mcp` is one of the servers, grouped by it.
 */
import { numberedParams, type SqlDialect } from './dialect.ts';
import { type ServerUsageQuery, type ServerUsageRow, type ToolUsageQuery, type ToolUsageRow } from '../trace-port.ts';
import { compareValues } from '../group-order.ts';
import { sqlNumber } from '../sql-values.ts';

/** An entry as bound: its tool and server as stored (values, or an engine's dictionary codes). */
export interface EncodedEntry {
  group: number;
  tool: string | number;
  server: string | number | null;
  /** The entry's own window; absent: the query's. */
  sinceS?: number | null;
}

/** Null when no entry is left (no span can match: the answer is empty). */
export function compileToolUsage(
  q: ToolUsageQuery,
  entries: readonly EncodedEntry[],
  dialect: SqlDialect,
  valueType: string,
): { sql: string; params: (string | number | null)[] } | null {
  if (entries.length === 0 || q.workspaceIds.length === 0) return null;
  const windowOf = (e: EncodedEntry) => (e.sinceS === undefined ? q.sinceS : e.sinceS);
  const windows = new Set(entries.map(windowOf));
  const perEntry = windows.size > 1;
  // The earliest window bounds the scan; an entry without a window (null) means every stored span.
  const earliest = windows.has(null) ? null : Math.min(...(windows as Set<number>));
  const { params, param } = numberedParams<string | number | null>();
  const rows = entries.map((e) => {
    const since = perEntry ? `, ${param(windowOf(e))}::BIGINT` : '';
    return `(${param(e.group)}::INTEGER, ${param(e.tool)}::${valueType}, ${param(e.server)}::${valueType}${since})`;
  });
  const where = [
    `s.org_id = ${param(q.orgId)}`,
    "s.category = 'tool_call'",
    dialect.inList('s.workspace_id', q.workspaceIds.map(param).join(', ')),
    ...(earliest !== null ? [`s.start_s >= ${param(earliest)}`] : []),
  ];
  const on = [
    's.tool = t.tool',
    dialect.same('s.mcp', 't.server', valueType.startsWith('INT') ? '-1' : "''"),
    ...(perEntry ? ['(t.since IS NULL OR s.start_s >= t.since)'] : []),
  ];
  const sql = `SELECT t.g AS g, COUNT(*) AS calls, COUNT(*) FILTER (WHERE s.is_error) AS errors,
  ${dialect.percentile(0.95, 's.duration_ms')} AS p95, MAX(s.start_s) AS last_s
FROM spans s JOIN (VALUES ${rows.join(', ')}) AS t(g, tool, server${perEntry ? ', since' : ''})
  ON ${on.join(' AND ')}
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

/**
 * The SQL of {@link TraceStore.serverUsage}; `servers` as stored (values, or an engine's dictionary
 * codes; a server no span names is dropped before). Null when nothing can match.
 */
export function compileServerUsage(
  q: ServerUsageQuery,
  servers: readonly (string | number)[],
  dialect: SqlDialect,
  valueType: string,
): { sql: string; params: (string | number)[] } | null {
  if (servers.length === 0 || q.workspaceIds.length === 0) return null;
  const { params, param } = numberedParams();
  const where = [
    `s.org_id = ${param(q.orgId)}`,
    "s.category = 'tool_call'",
    dialect.inList('s.workspace_id', q.workspaceIds.map(param).join(', ')),
    dialect.inList('s.mcp', servers.map((v) => `${param(v)}::${valueType}`).join(', ')),
    ...(q.sinceS !== null ? [`s.start_s >= ${param(q.sinceS)}`] : []),
  ];
  const sql = `SELECT s.mcp AS server, COUNT(*) AS calls, COUNT(*) FILTER (WHERE s.is_error) AS errors,
  ${dialect.percentile(0.95, 's.duration_ms')} AS p95, MAX(s.start_s) AS last_s
FROM spans s
WHERE ${where.join(' AND ')}
GROUP BY s.mcp`;
  return { sql, params };
}

/**
 * Rows of {@link compileServerUsage}, ordered by server (code point, in every engine: DuckDB groups
 * by dictionary code); `serverOf` turns a stored value back into the server id.
 */
export function toServerUsageRows(
  rows: Record<string, unknown>[],
  serverOf: (stored: unknown) => string,
): ServerUsageRow[] {
  return rows
    .map((r) => ({
      server: serverOf(r.server),
      calls: sqlNumber(r.calls),
      errors: sqlNumber(r.errors),
      p95LatencyMs: sqlNumber(r.p95),
      lastCalledS: sqlNumber(r.last_s),
    }))
    .sort((a, b) => compareValues(a.server, b.server));
}
