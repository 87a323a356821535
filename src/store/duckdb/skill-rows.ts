/**
 * The rows a DuckDB statistics query reads for skill S (and version v): the sealed ones from
 * `skill_spans`, plus, while sealing lags behind ingestion, two tails read from `spans`:
 *
 *   unsealed spans (seq > W) of traces with a mapping to S;
 *   sealed spans (seq <= W) of traces whose mappings to S are all unsealed.
 *
 * With sealing.ts's invariant the three sets are disjoint and together hold every span of S's
 * traces. W is read inside the statement, so the query sees sealing atomically.
 */
import { SOURCE_COLUMNS, spanSourceColumns, type RowSource } from '../stats/row-source.ts';
import type { SkillSubject } from '../trace-port.ts';

const SEALED_COLUMNS = SOURCE_COLUMNS.join(', ');
const SPAN_COLUMNS = spanSourceColumns('trace_key');
const W = '(SELECT seq FROM sealed)';

/**
 * `key`: the skill's integer key when the store knows it (keys never change), so zone maps prune
 * on a constant; else it is looked up in the statement's own snapshot. `pending`: spans were
 * stored after the last sealing, so the tails may hold rows.
 */
export function skillRows(subject: SkillSubject, key: number | undefined, pending: boolean): RowSource {
  return {
    // skill_spans is clustered by skill; the tails are joins, cheaper to keep than to redo.
    rescan: !pending,
    // Sealed rows only: the tails' traces are not in skill_crossing yet.
    crossingTraces: (_q, param) =>
      pending || key === undefined ? null : `SELECT trace_key FROM skill_crossing WHERE of_key = ${param(key)}`,
    sql(q, where, param) {
      // Placeholders are made on first use: DuckDB rejects a statement with unused parameters.
      const once = (v: string | number) => {
        let p: string | undefined;
        return () => (p ??= param(v));
      };
      const orgParam = once(q.orgId);
      const skillParam = once(subject.skill);
      const version = subject.skillVersion === undefined ? null : param(subject.skillVersion);
      const ofKey = key ?? `(SELECT key FROM skill_keys WHERE org_id = ${orgParam()} AND skill = ${skillParam()})`;
      const sealed = `SELECT ${SEALED_COLUMNS} FROM skill_spans
WHERE of_key = ${ofKey}${version === null ? '' : ` AND list_contains(of_versions, ${version})`} AND ${where}`;
      if (!pending) return sealed;
      const org = orgParam();
      const skill = skillParam();
      const maps = (alias: string) =>
        `${alias}.org_id = ${org} AND ${alias}.skill = ${skill}${version === null ? '' : ` AND ${alias}.skill_version = ${version}`}`;
      const unsealedSpans = `SELECT ${SPAN_COLUMNS} FROM spans
WHERE org_id = ${org} AND seq > ${W} AND ${where}
AND trace_key IN (SELECT m.trace_key FROM trace_skills m WHERE ${maps('m')} AND m.trace_key IN (SELECT trace_key FROM spans WHERE seq > ${W}))`;
      const lateMapped = `SELECT ${SPAN_COLUMNS} FROM spans
WHERE org_id = ${org} AND seq <= ${W} AND ${where}
AND trace_key IN (SELECT m.trace_key FROM trace_skills m WHERE ${maps('m')} AND m.seq > ${W}
  AND NOT EXISTS (SELECT 1 FROM trace_skills o WHERE ${maps('o')} AND o.trace_key = m.trace_key AND o.seq <= ${W}))`;
      return `${sealed}\nUNION ALL ${unsealedSpans}\nUNION ALL ${lateMapped}`;
    },
  };
}
