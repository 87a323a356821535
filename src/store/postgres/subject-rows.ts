/**
 * The rows detection's facts read in PostgreSQL (stats/subject-facts.ts): those of skill-rows.ts
 * and agent-rows.ts for every subject of an organization at once, each row with its subject.
 *
 * Skills: the sealed rows of `skill_spans`, and, when anything lies above the watermark, the same
 * two tails as skill-rows.ts, each span once per skill its trace maps to (sealing.ts's invariant
 * makes the three sets disjoint per skill). Agents: the spans of the traces `trace_agents` maps to
 * each agent by a span of the same workspace (a fact's workspace is its spans', as operation 1's
 * `workspace_id` scopes the mappings: row-source.ts mappingScope).
 */
import { SOURCE_COLUMNS, spanSourceColumns } from '../stats/row-source.ts';
import type { SubjectSource } from '../stats/subject-facts.ts';
import type { SealedMarks } from './skill-rows.ts';

const SEALED_COLUMNS = SOURCE_COLUMNS.join(', ');
const SPAN_COLUMNS = spanSourceColumns('spans.trace_id::uuid');
const text = (column: string) => column;

export function skillSubjectRows(marks: SealedMarks): SubjectSource {
  return {
    text,
    sql(orgId, where, param) {
      const org = param(orgId);
      const branches = [
        `SELECT of_skill AS subject, ${SEALED_COLUMNS} FROM skill_spans WHERE org_id = ${org} AND ${where}`,
      ];
      if (!marks.unsealedSpans && !marks.unsealedMappings) return branches[0] as string;
      const w = `${param(marks.watermark)}::xid8`;
      // Each mapped (trace, skill) once, whatever its versions.
      if (marks.unsealedSpans)
        branches.push(`SELECT m.m_skill AS subject, ${SPAN_COLUMNS} FROM spans
JOIN (SELECT DISTINCT trace_id AS m_trace, skill AS m_skill FROM trace_skills WHERE org_id = ${org}) m ON m.m_trace = spans.trace_id
WHERE spans.org_id = ${org} AND spans.xid >= ${w} AND ${where}`);
      if (marks.unsealedMappings)
        branches.push(`SELECT m.m_skill AS subject, ${SPAN_COLUMNS} FROM spans
JOIN (SELECT DISTINCT m.trace_id AS m_trace, m.skill AS m_skill FROM trace_skills m
  WHERE m.org_id = ${org} AND m.xid >= ${w} AND NOT EXISTS (SELECT 1 FROM trace_skills o
    WHERE o.org_id = m.org_id AND o.skill = m.skill AND o.trace_id = m.trace_id AND o.xid < ${w})) m ON m.m_trace = spans.trace_id
WHERE spans.org_id = ${org} AND spans.xid < ${w} AND ${where}`);
      return branches.join('\nUNION ALL ');
    },
  };
}

export function agentSubjectRows(): SubjectSource {
  return {
    text,
    sql(orgId, where, param) {
      const org = param(orgId);
      return `SELECT m.m_agent AS subject, ${SPAN_COLUMNS} FROM spans
JOIN (SELECT DISTINCT trace_id AS m_trace, workspace_id AS m_ws, agent AS m_agent FROM trace_agents WHERE org_id = ${org}) m
  ON m.m_trace = spans.trace_id AND m.m_ws = spans.workspace_id
WHERE spans.org_id = ${org} AND ${where}`;
    },
  };
}
