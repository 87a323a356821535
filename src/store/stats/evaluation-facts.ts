/**
 * The SQL of {@link EvaluationFactsReader.evaluationFacts} for both engines: per window, the
 * distinct (workspace, subject, trace) of an engine's rows of every subject's traces
 * (subject-facts.ts `SubjectSource`), narrowed to the traces with a scored evaluation in the
 * windows; joined with the organization's scored evaluations of the same workspace and trace whose
 * own time lies in the same window; the page of subjects with a joined evaluation; one GROUP BY per
 * (window, workspace, subject, name) for the sum and count of the scores; per (workspace, subject)
 * the `topNames` names with the most scores. The join is evaluations.ts's for operation 1's
 * `evaluation_score` with `workspace_id` set to one workspace and the window as the range.
 */
import {
  EVALUATION_FACT_NAMES,
  type EvaluationFacts,
  type EvaluationFactsPage,
  type EvaluationFactsQuery,
} from '../facts-port.ts';
import { sqlNumber, sqlText } from '../sql-values.ts';
import { numberedParams, type SqlDialect } from './dialect.ts';
import { chosenSubjects, type SubjectSource } from './subject-facts.ts';

export function compileEvaluationFacts(
  q: EvaluationFactsQuery,
  source: SubjectSource,
  dialect: SqlDialect,
): { sql: string; params: (string | number)[] } {
  const { params, param } = numberedParams();
  const dbl = dialect.double;
  const order = dialect.textOrder;
  const start = param(Math.min(...q.windows.map((w) => w.startS)));
  const end = param(Math.max(...q.windows.map((w) => w.endS)));
  const rows = source.sql(q.orgId, `start_s >= ${start} AND start_s < ${end}`, param);
  const windows = q.windows
    .map((w, i) => `(${param(i)}::INTEGER, ${param(w.startS)}::BIGINT, ${param(w.endS)}::BIGINT)`)
    .join(', ');
  // The page starts after `after` in the order it is taken in: rows of the subjects before are never read.
  const after = q.after === null ? '' : ` AND src.subject${order} > ${param(q.after)}${order}`;
  const sql = `WITH win (w, ws, we) AS (VALUES ${windows}),
ev AS MATERIALIZED (SELECT win.w, e.workspace_id, e.trace_key, e.name, e.score FROM evaluations e
  JOIN win ON e.time_s >= win.ws AND e.time_s < win.we
  WHERE e.org_id = ${param(q.orgId)} AND e.time_s >= ${start} AND e.time_s < ${end} AND e.score IS NOT NULL),
st AS MATERIALIZED (SELECT DISTINCT win.w, src.workspace_id, src.subject, src.trace_key
  FROM (${rows}) src JOIN win ON src.start_s >= win.ws AND src.start_s < win.we
  WHERE src.trace_key IN (SELECT trace_key FROM ev) AND ${chosenSubjects(q, 'src.subject', dialect, param)}${after}),
j AS MATERIALIZED (SELECT st.w, st.workspace_id, st.subject, ev.name, ev.score FROM st
  JOIN ev ON ev.w = st.w AND ev.workspace_id = st.workspace_id AND ev.trace_key = st.trace_key),
page AS MATERIALIZED (SELECT subject FROM j GROUP BY subject ORDER BY subject${order} LIMIT ${param(q.limit)}),
g AS MATERIALIZED (SELECT w, workspace_id, subject, name, SUM(score)::${dbl} AS total, COUNT(*)::${dbl} AS samples
  FROM j WHERE subject IN (SELECT subject FROM page) GROUP BY w, workspace_id, subject, name),
n AS (SELECT workspace_id, subject, name,
  row_number() OVER (PARTITION BY workspace_id, subject ORDER BY SUM(samples) DESC, name${order} ASC) AS rn
  FROM g GROUP BY workspace_id, subject, name)
SELECT g.w, g.workspace_id, g.subject, g.name, g.total / g.samples AS mean_score, g.samples FROM g
JOIN n ON n.workspace_id = g.workspace_id AND n.subject = g.subject AND n.name = g.name
WHERE n.rn <= ${param(q.topNames ?? EVALUATION_FACT_NAMES)}`;
  return { sql, params };
}

/** Text by Unicode code point, as the engines order subjects and names. */
const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The statement's rows as the port answers them, in its order. */
export function toEvaluationFacts(rows: Record<string, unknown>[], q: EvaluationFactsQuery): EvaluationFactsPage {
  const facts: EvaluationFacts[] = rows.map((r) => ({
    window: sqlNumber(r.w),
    workspaceId: sqlText(r.workspace_id),
    subject: sqlText(r.subject),
    evaluationName: sqlText(r.name),
    meanScore: sqlNumber(r.mean_score),
    samples: sqlNumber(r.samples),
  }));
  facts.sort(
    (a, b) =>
      byCodePoint(a.subject, b.subject) ||
      byCodePoint(a.workspaceId, b.workspaceId) ||
      byCodePoint(a.evaluationName, b.evaluationName) ||
      a.window - b.window,
  );
  const subjects = new Set(facts.map((f) => f.subject)).size;
  return { rows: facts, subjects, next: subjects === q.limit ? (facts.at(-1)?.subject ?? null) : null };
}
