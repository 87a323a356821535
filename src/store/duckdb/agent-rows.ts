/**
 * The rows a DuckDB statistics query reads for agent A: the spans of the traces `trace_agents`
 * maps to A (a trace belongs to A when any of its spans names A, for a caller who reads the
 * workspace of such a span: mappingScope), read from `spans` with the
 * range and filters applied, the traces semi-joined. Mappings are written in the transaction of
 * their spans, so a statement's snapshot sees both or neither: nothing waits for sealing.
 */
import { mappingScope, spanSourceColumns, type RowSource } from '../stats/row-source.ts';

const SPAN_COLUMNS = spanSourceColumns('trace_key');

/** `code`: the agent's dim_values code (a value no span has: one no mapping has, so no rows). */
export function agentRows(code: number): RowSource {
  return {
    // A semi-join over the range of `spans`: kept once rather than joined again.
    rescan: false,
    sql(q, where, param) {
      const org = param(q.orgId);
      return `SELECT ${SPAN_COLUMNS} FROM spans
WHERE org_id = ${org} AND ${where}
AND trace_key IN (SELECT trace_key FROM trace_agents WHERE org_id = ${org} AND agent = ${param(code)}
  AND ${mappingScope(q, param, 'workspace_id')})`;
    },
  };
}
