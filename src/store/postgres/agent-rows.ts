/**
 * The rows a PostgreSQL statistics query reads for agent A: the spans of the traces `trace_agents`
 * maps to A (a trace belongs to A when any of its spans names A, for a caller who reads the
 * workspace of such a span: mappingScope), read from `spans` with the range
 * and filters applied, the traces semi-joined. Mappings are written in the transaction of their
 * spans, so the statement's snapshot sees both or neither. The per-skill layout and its rollups
 * (sealing.ts, summed-rows.ts) hold only the spans of skills' traces: never read for an agent.
 */
import { mappingScope, spanSourceColumns, type RowSource } from '../stats/row-source.ts';
import type { AgentSubject } from '../trace-port.ts';

const SPAN_COLUMNS = spanSourceColumns('trace_id::uuid');

export function agentRows(subject: AgentSubject): RowSource {
  return {
    // A join over the range of `spans`: kept once rather than joined again.
    rescan: false,
    sql(q, where, param) {
      const org = param(q.orgId);
      return `SELECT ${SPAN_COLUMNS} FROM spans
WHERE org_id = ${org} AND ${where}
AND trace_id IN (SELECT m.trace_id FROM trace_agents m WHERE m.org_id = ${org} AND m.agent = ${param(subject.agent)}
  AND ${mappingScope(q, param, 'm.workspace_id')})`;
    },
  };
}
