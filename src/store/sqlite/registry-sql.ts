/**
 * SQL of the two dynamic registry queries (artifact search, tool aggregation). Identifiers come
 * only from whitelists; every value is a bound parameter.
 */
import type { ArtifactQuery, ArtifactSort, ToolAggregateQuery } from '../registry-port.ts';
import { likeEscape, searchWords, TOOL_GROUP_COLUMNS, type CompiledQuery as Compiled } from '../sql-text.ts';
import { RELATIONSHIP_COLUMNS } from '../sql-rows.ts';

type CompiledQuery = Compiled<string | number | null>;

const IN = 'IN (SELECT value FROM json_each(?))';

/** The relationships with either end in a JSON id list (bound twice), in the port's order (from, to, type). */
export const RELATIONSHIPS_OF_IDS = `SELECT ${RELATIONSHIP_COLUMNS} FROM relationships WHERE from_id ${IN} OR to_id ${IN} ORDER BY from_id, to_id, rel_type`;

/**
 * Latest versions by id (followed by an id test). Without statistics the planner scans the
 * (is_latest, kind, …) index with a Bloom filter over every latest row; the partial id index looks
 * up exactly the ids asked for.
 */
export const LATEST_BY_ID = 'artifacts INDEXED BY artifacts_latest_id WHERE is_latest = 1 AND id';

/** `id, workspace_id` of the latest version of each id in a JSON list. */
export const LATEST_WORKSPACES = `SELECT id, workspace_id FROM ${LATEST_BY_ID} ${IN}`;

/**
 * Full-text query for FTS5: every word of the text as a quoted token, all required. Quoting
 * makes FTS5 operators (`OR`, `NEAR`, `*`, `-`, `:`) plain words. Null when no word remains.
 */
function ftsQuery(text: string): string | null {
  return (
    searchWords(text)
      ?.map((w) => `"${w}"`)
      .join(' ') ?? null
  );
}

function orderBy(sorts: ArtifactSort[], ranked: boolean): string {
  const parts: string[] = [];
  for (const s of sorts) {
    const dir = s.desc ? 'DESC' : 'ASC';
    switch (s.field) {
      case 'relevance':
        if (ranked) parts.push(`rank ${s.desc ? 'DESC' : 'ASC'}`);
        break;
      case 'name':
        parts.push(`a.name_lower ${dir}`, `a.name ${dir}`);
        break;
      case 'display_name':
        parts.push('a.display_name_lower IS NULL', `a.display_name_lower ${dir}`);
        break;
      case 'created_at':
        parts.push(`a.created_at ${dir}`);
        break;
      case 'updated_at':
        parts.push(`a.updated_at ${dir}`);
        break;
    }
  }
  parts.push('a.id ASC');
  return parts.join(', ');
}

/**
 * The count and page SQL of `findArtifacts`: latest versions in scope, optional kind and text
 * (FTS5 bm25 ranking weighted name 10, display name 5, instructions 1; prefix/exact on lowercased
 * name or display name with LIKE wildcards escaped). Null when the text has no searchable word.
 */
export function artifactSearchSql(q: ArtifactQuery): CompiledQuery | null {
  const where = ['a.is_latest = 1', `a.workspace_id ${IN}`];
  const params: (string | number | null)[] = [JSON.stringify(q.workspaceIds)];
  if (q.kind !== undefined) {
    where.push('a.kind = ?');
    params.push(q.kind);
  }
  let from = 'artifacts a';
  let ranked = false;
  if (q.text !== undefined) {
    const text = q.text.query.trim().toLowerCase();
    if (q.text.strategy === 'keyword') {
      const match = ftsQuery(text);
      if (match === null) return null;
      // bm25 is lower for better matches; name hits weigh most, then display name, then instructions.
      from = 'artifacts_fts f JOIN artifacts a ON a.seq = f.rowid';
      where.unshift('artifacts_fts MATCH ?');
      params.unshift(match);
      ranked = true;
    } else if (q.text.strategy === 'prefix') {
      where.push("(a.name_lower LIKE ? ESCAPE '\\' OR a.display_name_lower LIKE ? ESCAPE '\\')");
      const pattern = `${likeEscape(text)}%`;
      params.push(pattern, pattern);
    } else {
      where.push('(a.name_lower = ? OR a.display_name_lower = ?)');
      params.push(text, text);
    }
  }
  const select = ranked ? 'a.seq, bm25(artifacts_fts, 10.0, 5.0, 1.0) AS rank' : 'a.seq';
  const body = `FROM ${from} WHERE ${where.join(' AND ')}`;
  return {
    count: `SELECT COUNT(*) AS n ${body}`,
    page: `SELECT ${select} ${body} ORDER BY ${orderBy(q.sorts, ranked)} LIMIT ? OFFSET ?`,
    params,
  };
}

/**
 * The count and page SQL of `aggregateTools` over latest tool versions in scope: one row per
 * group (or a single row without `groupBy`) with count, distinct servers and latest update; and
 * `refs`, the distinct (group key, tool name, server) rows, taking `params` then LIMIT.
 */
export function toolAggregateSql(q: ToolAggregateQuery): CompiledQuery & { refs: string } {
  const where = ['is_latest = 1', "kind = 'tool'", `workspace_id ${IN}`];
  const params: (string | number | null)[] = [JSON.stringify(q.workspaceIds)];
  for (const f of q.filters) {
    where.push(`${TOOL_GROUP_COLUMNS[f.field]} ${IN}`);
    params.push(JSON.stringify(f.values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v))));
  }
  const cols = q.groupBy.map((f) => TOOL_GROUP_COLUMNS[f]);
  const keys = q.groupBy.map((f) => `${TOOL_GROUP_COLUMNS[f]} AS k_${f}`);
  const metrics = 'COUNT(*) AS count, COUNT(DISTINCT server_id) AS servers, MAX(updated_at) AS latest_updated_at';
  const base = `FROM artifacts WHERE ${where.join(' AND ')}`;
  const refs = `SELECT DISTINCT ${[...keys, "COALESCE(json_extract(doc, '$.tool_name'), name) AS tool", 'server_id AS server'].join(', ')} ${base} ORDER BY ${[...cols, 'tool', 'server'].join(', ')} LIMIT ?`;
  if (cols.length === 0) {
    return {
      count: `SELECT CASE WHEN COUNT(*) > 0 THEN 1 ELSE 0 END AS n ${base}`,
      page: `SELECT ${metrics} ${base} LIMIT ? OFFSET ?`,
      refs,
      params,
    };
  }
  const group = `GROUP BY ${cols.join(', ')}`;
  // Groups: most tools first, then key values ascending with missing values (null) last.
  return {
    count: `SELECT COUNT(*) AS n FROM (SELECT 1 ${base} ${group})`,
    page: `SELECT ${keys.join(', ')}, ${metrics} ${base} ${group} ORDER BY count DESC, ${cols.map((c) => `${c} IS NULL, ${c} ASC`).join(', ')} LIMIT ? OFFSET ?`,
    refs,
    params,
  };
}
