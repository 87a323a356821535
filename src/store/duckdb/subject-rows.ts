/**
 * The rows detection's facts read in DuckDB (stats/subject-facts.ts): those of skill-rows.ts and
 * agent-rows.ts for every subject of an organization at once, each row with its subject.
 *
 * Skills: the sealed rows of `skill_spans` under their skill (`skill_keys`), and while sealing lags
 * the same two tails as skill-rows.ts, each span once per skill its trace maps to (sealing.ts's
 * invariant makes the three sets disjoint per skill). Agents: the spans of the traces
 * `trace_agents` maps to each agent by a span of the same workspace (a fact's workspace is its
 * spans', as operation 1's `workspace_id` scopes the mappings: row-source.ts mappingScope).
 */
import type { SubjectSource } from '../stats/subject-facts.ts';
import { SOURCE_COLUMNS, spanSourceColumns } from '../stats/row-source.ts';

const SEALED_COLUMNS = SOURCE_COLUMNS.join(', ');
const SPAN_COLUMNS = spanSourceColumns('trace_key');
const W = '(SELECT seq FROM sealed)';
/** A dimension column's text: DuckDB stores its dictionary code. */
const text = (column: string) => `(SELECT value FROM dim_values WHERE id = ${column})`;

/** `pending`: spans were stored after the last sealing, so the tails may hold rows. */
export function skillSubjectRows(pending: boolean): SubjectSource {
  return {
    text,
    sql(orgId, where, param) {
      const org = param(orgId);
      const sealed = `SELECT k.k_skill AS subject, ${SEALED_COLUMNS} FROM skill_spans
JOIN (SELECT key AS k_key, skill AS k_skill FROM skill_keys WHERE org_id = ${org}) k ON k.k_key = skill_spans.of_key
WHERE ${where}`;
      if (!pending) return sealed;
      // Each mapped (trace, skill) once, whatever its versions.
      const unsealedSpans = `SELECT m.m_skill AS subject, ${SPAN_COLUMNS} FROM spans
JOIN (SELECT DISTINCT trace_key AS m_trace, skill AS m_skill FROM trace_skills
  WHERE org_id = ${org} AND trace_key IN (SELECT trace_key FROM spans WHERE seq > ${W})) m ON m.m_trace = spans.trace_key
WHERE spans.org_id = ${org} AND seq > ${W} AND ${where}`;
      const lateMapped = `SELECT m.m_skill AS subject, ${SPAN_COLUMNS} FROM spans
JOIN (SELECT DISTINCT m.trace_key AS m_trace, m.skill AS m_skill FROM trace_skills m
  WHERE m.org_id = ${org} AND m.seq > ${W} AND NOT EXISTS (SELECT 1 FROM trace_skills o
    WHERE o.org_id = m.org_id AND o.skill = m.skill AND o.trace_key = m.trace_key AND o.seq <= ${W})) m ON m.m_trace = spans.trace_key
WHERE spans.org_id = ${org} AND seq <= ${W} AND ${where}`;
      return `${sealed}\nUNION ALL ${unsealedSpans}\nUNION ALL ${lateMapped}`;
    },
  };
}

export function agentSubjectRows(): SubjectSource {
  return {
    text,
    sql(orgId, where, param) {
      const org = param(orgId);
      return `SELECT d.value AS subject, ${SPAN_COLUMNS} FROM spans
JOIN (SELECT DISTINCT trace_key AS m_trace, workspace_id AS m_ws, agent AS m_agent FROM trace_agents WHERE org_id = ${org}) m
  ON m.m_trace = spans.trace_key AND m.m_ws = spans.workspace_id
JOIN dim_values d ON d.id = m.m_agent
WHERE spans.org_id = ${org} AND ${where}`;
    },
  };
}
