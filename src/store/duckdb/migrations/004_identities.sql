-- Exactly once (DESIGN §12): a span's identity is (org_id, trace_key, span_id, start_s), a harness
-- metric point's (org_id, point_key, time_s), the key a hash of its series and times computed at
-- ingestion (points stored before have none). The writer stores only rows not stored yet
-- (identities.ts).
ALTER TABLE metric_points ADD COLUMN point_key VARCHAR;
-- Spans stored more than once before this release (resent requests) keep their first copy. The
-- traces they belong to lose their sealed rows, and their spans and mappings are numbered after
-- every other span: unsealed, so statistics read them from the spans until sealing (at open)
-- writes them again.
CREATE TEMP TABLE resent_traces AS SELECT DISTINCT org_id, trace_key FROM (
  SELECT org_id, trace_key FROM spans GROUP BY org_id, trace_key, span_id, start_s HAVING count(*) > 1);
DELETE FROM spans WHERE seq IN (SELECT seq FROM (
  SELECT seq, row_number() OVER (PARTITION BY org_id, trace_key, span_id, start_s ORDER BY seq) AS n FROM spans s
  WHERE EXISTS (SELECT 1 FROM resent_traces r WHERE r.org_id = s.org_id AND r.trace_key = s.trace_key)) WHERE n > 1);
DELETE FROM skill_spans WHERE EXISTS (SELECT 1 FROM resent_traces r JOIN skill_keys k ON k.org_id = r.org_id
  WHERE k.key = skill_spans.of_key AND r.trace_key = skill_spans.trace_key);
DELETE FROM skill_trace_days WHERE EXISTS (SELECT 1 FROM resent_traces r JOIN skill_keys k ON k.org_id = r.org_id
  WHERE k.key = skill_trace_days.of_key AND r.trace_key = skill_trace_days.trace_key);
DELETE FROM skill_crossing WHERE EXISTS (SELECT 1 FROM resent_traces r JOIN skill_keys k ON k.org_id = r.org_id
  WHERE k.key = skill_crossing.of_key AND r.trace_key = skill_crossing.trace_key);
UPDATE spans SET seq = renumbered.seq FROM (
  SELECT s.seq AS old, (SELECT max(seq) FROM spans) + row_number() OVER (ORDER BY s.seq) AS seq FROM spans s
  WHERE EXISTS (SELECT 1 FROM resent_traces r WHERE r.org_id = s.org_id AND r.trace_key = s.trace_key)) renumbered
WHERE spans.seq = renumbered.old;
UPDATE trace_skills SET seq = (SELECT max(seq) FROM spans)
WHERE EXISTS (SELECT 1 FROM resent_traces r WHERE r.org_id = trace_skills.org_id AND r.trace_key = trace_skills.trace_key);
DROP TABLE resent_traces;
