/**
 * PostgreSQL dialect of the two dynamic registry queries (artifact search, tool aggregation), with
 * the semantics of store/sqlite/registry-sql.ts. Identifiers come only from whitelists; every value
 * is a numbered parameter; id lists are one text[] parameter.
 */
import type { ArtifactQuery, ArtifactSort, ToolAggregateQuery } from '../registry-port.ts';
import { likeEscape, searchWords, TOOL_GROUP_COLUMNS, type CompiledQuery } from '../sql-text.ts';
import type { Row } from '../sql-rows.ts';

/** Relationships `r` with either end among $1 (text[]), in the order of the port. */
export const RELATIONSHIPS_OF =
  'WHERE r.from_id = ANY($1::text[]) OR r.to_id = ANY($1::text[]) ORDER BY r.from_id COLLATE "C", r.to_id COLLATE "C", r.rel_type COLLATE "C"';

/**
 * The workspace of the latest version of the artifact `${end}_id` of `r`, looked up by id (a join
 * was planned as hash joins over every latest artifact); the newest should a writer have left two
 * latest rows. `skipAsked`: null for an end among $1, whose workspace the caller knows.
 */
function endWorkspaceSql(end: 'from' | 'to', skipAsked: boolean): string {
  const lookup = `(SELECT a.workspace_id FROM artifacts a WHERE a.is_latest AND a.id = r.${end}_id ORDER BY a.version_ordinal DESC LIMIT 1)`;
  const value = skipAsked ? `CASE WHEN r.${end}_id = ANY($1::text[]) THEN NULL ELSE ${lookup} END` : lookup;
  return `${value} AS ${end}_workspace_id`;
}

/** The relationships of `RELATIONSHIPS_OF` with their ends' workspaces (`endWorkspaceSql`). */
export function relationshipsWithEndsSql(skipAsked: boolean): string {
  return `SELECT r.*, ${endWorkspaceSql('from', skipAsked)}, ${endWorkspaceSql('to', skipAsked)} FROM relationships r ${RELATIONSHIPS_OF}`;
}

/** Artifact id to workspace id, from rows of `relationshipsWithEndsSql` (ends without one left out). */
export function endWorkspacesOf(rows: readonly Row[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of rows) {
    if (r.from_workspace_id != null) out.set(r.from_id as string, r.from_workspace_id as string);
    if (r.to_workspace_id != null) out.set(r.to_id as string, r.to_workspace_id as string);
  }
  return out;
}

/** Every word of the text, all required, as a tsquery source; null when no word remains. */
function tsQuery(text: string): string | null {
  return (
    searchWords(text)
      ?.map((w) => `'${w}'`)
      .join(' & ') ?? null
  );
}

function orderBy(sorts: ArtifactSort[], ranked: boolean): string {
  const parts: string[] = [];
  for (const s of sorts) {
    const dir = s.desc ? 'DESC' : 'ASC';
    if (s.field === 'relevance') {
      if (ranked) parts.push(`rank ${s.desc ? 'ASC' : 'DESC'}`);
    } else if (s.field === 'name') parts.push(`a.name_lower COLLATE "C" ${dir}`, `a.name COLLATE "C" ${dir}`);
    else if (s.field === 'display_name')
      parts.push('a.display_name_lower IS NULL', `a.display_name_lower COLLATE "C" ${dir}`);
    else parts.push(`a.${s.field} COLLATE "C" ${dir}`);
  }
  parts.push('a.id COLLATE "C" ASC');
  return parts.join(', ');
}

/** `columns`: what the page reads of each of its rows (of `artifacts a`), beside `total_count`. */
export function artifactSearchSql(q: ArtifactQuery, columns: string): CompiledQuery | null {
  const params: unknown[] = [[...q.workspaceIds]];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = ['a.is_latest', 'a.workspace_id = ANY($1::text[])'];
  if (q.kind !== undefined) where.push(`a.kind = ${p(q.kind)}`);
  let rankOf = '';
  let ranked = false;
  if (q.text !== undefined) {
    const text = q.text.query.trim().toLowerCase();
    if (q.text.strategy === 'keyword') {
      const query = tsQuery(text);
      if (query === null) return null;
      const ref = p(query);
      where.push(`a.search @@ to_tsquery('simple', ${ref})`);
      rankOf = `ts_rank(a.search, to_tsquery('simple', ${ref})) AS rank`;
      ranked = true;
    } else if (q.text.strategy === 'prefix') {
      const ref = p(`${likeEscape(text)}%`);
      where.push(`(a.name_lower LIKE ${ref} OR a.display_name_lower LIKE ${ref})`);
    } else {
      const ref = p(text);
      where.push(`(a.name_lower = ${ref} OR a.display_name_lower = ${ref})`);
    }
  }
  const body = `FROM artifacts a WHERE ${where.join(' AND ')}`;
  const n = params.length;
  const order = orderBy(q.sorts, ranked);
  // One round trip per page: the sort runs over (seq, sort keys, rank) with the match count as a
  // window, then only the page's rows are read whole and put back in the same (total) order.
  const keys = ranked ? `a.seq, COUNT(*) OVER () AS total_count, ${rankOf}` : 'a.seq, COUNT(*) OVER () AS total_count';
  return {
    count: `SELECT COUNT(*)::int AS n ${body}`,
    page:
      `WITH page AS (SELECT ${keys} ${body} ORDER BY ${order} LIMIT $${n + 1} OFFSET $${n + 2}) ` +
      `SELECT ${columns}, page.total_count::int AS total_count FROM page JOIN artifacts a ON a.seq = page.seq ORDER BY ${order}`,
    params,
  };
}

/** Also `refs`: the distinct (group key, tool name, server) rows, taking `params` then LIMIT. */
export function toolAggregateSql(q: ToolAggregateQuery): CompiledQuery & { refs: string } {
  const params: unknown[] = [[...q.workspaceIds]];
  const where = ['is_latest', "kind = 'tool'", 'workspace_id = ANY($1::text[])'];
  for (const f of q.filters) {
    const col = TOOL_GROUP_COLUMNS[f.field];
    if (f.field === 'is_system') {
      params.push(f.values.map((v) => v === true || v === 'true'));
      where.push(`${col} = ANY($${params.length}::boolean[])`);
    } else {
      params.push(f.values.map(String));
      where.push(`${col} = ANY($${params.length}::text[])`);
    }
  }
  const cols = q.groupBy.map((f) => TOOL_GROUP_COLUMNS[f]);
  const keys = q.groupBy.map((f) => `${TOOL_GROUP_COLUMNS[f]} AS k_${f}`);
  const metrics =
    'COUNT(*)::int AS count, COUNT(DISTINCT server_id)::int AS servers, MAX(updated_at) AS latest_updated_at';
  const base = `FROM artifacts WHERE ${where.join(' AND ')}`;
  const n = params.length;
  const refs = `SELECT DISTINCT ${[...keys, "COALESCE(doc::jsonb->>'tool_name', name) AS tool", 'server_id AS server'].join(', ')} ${base} ORDER BY ${[...cols, 'tool', 'server'].join(', ')} LIMIT $${n + 1}`;
  if (cols.length === 0) {
    return {
      count: `SELECT CASE WHEN COUNT(*) > 0 THEN 1 ELSE 0 END AS n ${base}`,
      page: `SELECT ${metrics} ${base} LIMIT $${n + 1} OFFSET $${n + 2}`,
      refs,
      params,
    };
  }
  const group = `GROUP BY ${cols.join(', ')}`;
  const order = cols.map((c) => (c === 'is_system' ? `${c} ASC` : `${c} COLLATE "C" ASC`)).join(', ');
  return {
    count: `SELECT COUNT(*)::int AS n FROM (SELECT 1 ${base} ${group}) g`,
    page: `SELECT ${keys.join(', ')}, ${metrics} ${base} ${group} ORDER BY count DESC, ${order} LIMIT $${n + 1} OFFSET $${n + 2}`,
    refs,
    params,
  };
}
