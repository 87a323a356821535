/**
 * The SQL of {@link SubjectFactsReader.subjectFacts} for both engines: over an engine's rows of
 * every subject's traces (`SubjectSource`: SOURCE_COLUMNS plus the subject), those of the subjects
 * the query chooses (`only`, `except`), the page of subjects, the rows joined with the windows, and one GROUP BY per (window, workspace, subject) whose parts
 * and measures are the statistics compiler's own (measures.ts `partSql`, `finalSql`), so each
 * number is the one operation 1 computes for that subject, range and workspace. Two more groupings
 * of the same rows keep each group's top tools (tool_call spans) and models (cost).
 */
import { SUBJECT_FACT_TOP, type SubjectFacts, type SubjectFactsPage, type SubjectFactsQuery } from '../facts-port.ts';
import { sqlNumber, sqlText } from '../sql-values.ts';
import { numberedParams, type Param, type SqlDialect } from './dialect.ts';
import { finalSql, partSql, type Part } from './measures.ts';

/**
 * An engine's rows of the subjects of one type in an organization: a SELECT of `subject` (its id as
 * text) and SOURCE_COLUMNS, one row per (span, subject of the span's trace), `where` (over the span
 * columns) holding in every branch.
 */
export interface SubjectSource {
  sql(orgId: string, where: string, param: Param): string;
  /** The text of a column of the tool, mcp or model dimension (an engine storing codes decodes it). */
  text(column: string): string;
}

const PARTS: readonly Part[] = ['traces', 'sessions', 'users', 'inv', 'err', 'tokens', 'cost', 'p50', 'p90', 'p99'];
/** Main, tool and model rows share one column list. */
const VALUE_COLUMNS = [
  ...PARTS.map((p) => `p_${p}`),
  'm_tokens_per_trace',
  'm_success_rate',
  'calls',
  'errors',
  'cost',
];
const KEYS = 'w, workspace_id, subject';

/**
 * The condition a query's `only` and `except` put on the subject `column` (TRUE when it names
 * neither): kept in the rows read once, so the subjects left out cost no grouping.
 */
export function chosenSubjects(
  q: { only?: readonly string[]; except?: readonly string[] },
  column: string,
  dialect: SqlDialect,
  param: Param,
): string {
  const list = (ids: readonly string[]) => dialect.inList(column, ids.map((id) => param(id)).join(', '));
  const conditions: string[] = [];
  if (q.only !== undefined) conditions.push(q.only.length === 0 ? 'FALSE' : list(q.only));
  if (q.except !== undefined && q.except.length > 0) conditions.push(`NOT ${list(q.except)}`);
  return conditions.length === 0 ? 'TRUE' : conditions.join(' AND ');
}
/** The source columns the parts and groupings read. */
const FACT_COLUMNS = [
  'subject',
  'trace_key',
  'workspace_id',
  'start_s',
  'user_id',
  'session_id',
  'is_invocation',
  'is_tool_call',
  'is_error',
  'tokens',
  'cost',
  'duration_ms',
  'tool',
  'mcp',
  'model',
];

export function compileSubjectFacts(
  q: SubjectFactsQuery,
  source: SubjectSource,
  dialect: SqlDialect,
): { sql: string; params: (string | number)[] } {
  const { params, param } = numberedParams();
  const dbl = dialect.double;
  const order = dialect.textOrder;
  const start = Math.min(...q.windows.map((w) => w.startS));
  const end = Math.max(...q.windows.map((w) => w.endS));
  const rows = source.sql(q.orgId, `start_s >= ${param(start)} AND start_s < ${param(end)}`, param);
  // The page starts after `after` in the order it is taken in: rows of the subjects before are never read.
  const after = q.after === null ? '' : ` AND src.subject${order} > ${param(q.after)}${order}`;
  const windows = q.windows
    .map((w, i) => `(${param(i)}::INTEGER, ${param(w.startS)}::BIGINT, ${param(w.endS)}::BIGINT)`)
    .join(', ');
  const nulls = (columns: readonly string[]) => columns.map((c) => `NULL::${dbl} AS ${c}`);
  const main = `SELECT 0 AS kind, ${KEYS}, NULL::${dialect.text} AS tool, NULL::${dialect.text} AS mcp, ${[
    ...PARTS.map((p) => `p_${p}`),
    `${finalSql('tokens_per_trace')} AS m_tokens_per_trace`,
    `${finalSql('success_rate')} AS m_success_rate`,
    ...nulls(['calls', 'errors', 'cost']),
  ].join(', ')}
FROM (SELECT ${KEYS}, ${PARTS.map((p) => `${partSql(p, dialect)} AS p_${p}`).join(', ')} FROM r GROUP BY ${KEYS}) main`;
  const rest = nulls(VALUE_COLUMNS.slice(0, PARTS.length + 2));
  // Ties are broken by the text of the values, the same in both engines (nulls last).
  const tools = `SELECT 1 AS kind, ${KEYS}, tool_t AS tool, mcp_t AS mcp, ${[...rest, 'calls', 'errors', `NULL::${dbl} AS cost`].join(', ')}
FROM (SELECT *, row_number() OVER (PARTITION BY ${KEYS} ORDER BY errors DESC, calls DESC, tool_t${order} ASC NULLS LAST, mcp_t${order} ASC NULLS LAST) AS rn
  FROM (SELECT ${KEYS}, ${source.text('tool')} AS tool_t, ${source.text('mcp')} AS mcp_t,
    COUNT(*)::${dbl} AS calls, (COUNT(*) FILTER (WHERE is_error))::${dbl} AS errors
    FROM r WHERE is_tool_call GROUP BY ${KEYS}, tool, mcp) g) t
WHERE rn <= ${param(q.topTools ?? SUBJECT_FACT_TOP)}`;
  const models = `SELECT 2 AS kind, ${KEYS}, model_t AS tool, NULL::${dialect.text} AS mcp, ${[...rest, `NULL::${dbl} AS calls`, `NULL::${dbl} AS errors`, 'cost'].join(', ')}
FROM (SELECT *, row_number() OVER (PARTITION BY ${KEYS} ORDER BY cost DESC, model_t${order} ASC) AS rn
  FROM (SELECT ${KEYS}, ${source.text('model')} AS model_t, SUM(cost)::${dbl} AS cost
    FROM r WHERE model IS NOT NULL GROUP BY ${KEYS}, model) g) m
WHERE rn <= ${param(q.topModels ?? SUBJECT_FACT_TOP)}`;
  // The rows in windows are kept once, with the columns the parts read; the page is of the
  // subjects with rows there, and each grouping reads the page's rows of them.
  const sql = `WITH win (w, ws, we) AS (VALUES ${windows}),
rw AS MATERIALIZED (SELECT win.w, ${FACT_COLUMNS.map((c) => `src.${c}`).join(', ')}
  FROM (${rows}) src JOIN win ON src.start_s >= win.ws AND src.start_s < win.we
  WHERE ${chosenSubjects(q, 'src.subject', dialect, param)}${after}),
page AS MATERIALIZED (SELECT subject FROM rw GROUP BY subject ORDER BY subject${order} LIMIT ${param(q.limit)}),
r AS NOT MATERIALIZED (SELECT * FROM rw WHERE subject IN (SELECT subject FROM page))
${main}
UNION ALL ${tools}
UNION ALL ${models}`;
  return { sql, params };
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const text = (v: unknown): string | null => (v === null || v === undefined ? null : sqlText(v));
/** Text by Unicode code point, as the engines order subjects. */
const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The statement's rows as the port answers them: one SubjectFacts per main row, its tools and models attached. */
export function toSubjectFacts(rows: Record<string, unknown>[], q: SubjectFactsQuery): SubjectFactsPage {
  const facts = new Map<string, SubjectFacts>();
  const key = (r: Record<string, unknown>) => JSON.stringify([r.subject, r.workspace_id, sqlNumber(r.w)]);
  for (const r of rows) {
    if (sqlNumber(r.kind) !== 0) continue;
    facts.set(key(r), {
      window: sqlNumber(r.w),
      workspaceId: sqlText(r.workspace_id),
      subject: sqlText(r.subject),
      traces: sqlNumber(r.p_traces),
      sessions: sqlNumber(r.p_sessions),
      activeUsers: sqlNumber(r.p_users),
      invocations: sqlNumber(r.p_inv),
      errors: sqlNumber(r.p_err),
      tokens: sqlNumber(r.p_tokens),
      cost: sqlNumber(r.p_cost),
      latencyP50: num(r.p_p50),
      latencyP90: num(r.p_p90),
      latencyP99: num(r.p_p99),
      tokensPerTrace: num(r.m_tokens_per_trace),
      successRate: num(r.m_success_rate),
      tools: [],
      models: [],
    });
  }
  for (const r of rows) {
    const f = facts.get(key(r));
    if (f === undefined) continue;
    if (sqlNumber(r.kind) === 1)
      f.tools.push({ tool: text(r.tool), mcp: text(r.mcp), calls: sqlNumber(r.calls), errors: sqlNumber(r.errors) });
    else if (sqlNumber(r.kind) === 2) f.models.push({ model: sqlText(r.tool), cost: sqlNumber(r.cost) });
  }
  const ordered = [...facts.values()].sort(
    (a, b) => byCodePoint(a.subject, b.subject) || byCodePoint(a.workspaceId, b.workspaceId) || a.window - b.window,
  );
  for (const f of ordered) {
    f.tools.sort(
      (a, b) => b.errors - a.errors || b.calls - a.calls || byNullable(a.tool, b.tool) || byNullable(a.mcp, b.mcp),
    );
    f.models.sort((a, b) => b.cost - a.cost || byCodePoint(a.model, b.model));
  }
  const subjects = new Set(ordered.map((f) => f.subject)).size;
  return { rows: ordered, subjects, next: subjects === q.limit ? (ordered.at(-1)?.subject ?? null) : null };
}

function byNullable(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return byCodePoint(a, b);
}
