-- Exactly once (DESIGN §12): a span's identity is (org_id, trace_id, span_id, start_s), a harness
-- metric point's (org_id, point_key, time_s). Unique indexes hold them (each with its table's
-- partition key); ingestion writes only the rows not stored yet (span-writes.ts). The span index
-- leads with trace_id and takes over from spans_trace.
--
-- Spans stored more than once before this release (resent requests) keep one copy. The traces they
-- belong to lose their sealed rows, with the rollups and special pairs that counted them, and their
-- mappings take this migration's transaction id: unsealed, so statistics read those traces' spans
-- from `spans` (sealing.ts: the tails) until the next sealing step writes them again.
CREATE TEMP TABLE resent_traces ON COMMIT DROP AS
  SELECT DISTINCT org_id, trace_id FROM (
    SELECT org_id, trace_id FROM spans GROUP BY org_id, trace_id, span_id, start_s HAVING count(*) > 1) copies;
DELETE FROM spans s USING (
  SELECT tableoid, ctid, row_number() OVER (PARTITION BY org_id, trace_id, span_id, start_s ORDER BY xid) AS n
  FROM spans WHERE (org_id, trace_id) IN (SELECT org_id, trace_id FROM resent_traces)) d
WHERE s.tableoid = d.tableoid AND s.ctid = d.ctid AND d.n > 1;
SET LOCAL gateway.rollups = 'kept';
WITH gone AS (DELETE FROM skill_spans k USING resent_traces r WHERE k.org_id = r.org_id AND k.trace_key = r.trace_id::uuid
  RETURNING k.org_id, k.of_skill, k.trace_key, k.workspace_id, k.start_s, k.harness, k.skill, k.skill_version, k.command, k.mcp, k.tool, k.model, k.user_id, k.is_invocation, k.is_tool_call, k.is_error, k.tokens, k.firsts)
INSERT INTO skill_rollup (org_id, of_skill, day_s, workspace_id, harness, skill, skill_version, command, mcp, tool, model, user_id, spans, inv, err, tool_calls, tokens, f_trace, f_harness, f_skill, f_skill_version, f_command, f_mcp, f_tool, f_model, f_user_id)
SELECT org_id, of_skill, (start_s / 86400) * 86400 AS day_s, workspace_id, harness, skill, skill_version, command, mcp, tool, model, user_id, -COUNT(*) AS spans, -COUNT(*) FILTER (WHERE is_invocation) AS inv, -COUNT(*) FILTER (WHERE is_invocation AND is_error) AS err, -COUNT(*) FILTER (WHERE is_tool_call) AS tool_calls, -COALESCE(SUM(tokens), 0) AS tokens, -COUNT(*) FILTER (WHERE firsts & 1 <> 0) AS f_trace, -COUNT(*) FILTER (WHERE firsts & 2 <> 0) AS f_harness, -COUNT(*) FILTER (WHERE firsts & 4 <> 0) AS f_skill, -COUNT(*) FILTER (WHERE firsts & 8 <> 0) AS f_skill_version, -COUNT(*) FILTER (WHERE firsts & 16 <> 0) AS f_command, -COUNT(*) FILTER (WHERE firsts & 32 <> 0) AS f_mcp, -COUNT(*) FILTER (WHERE firsts & 64 <> 0) AS f_tool, -COUNT(*) FILTER (WHERE firsts & 128 <> 0) AS f_model, -COUNT(*) FILTER (WHERE firsts & 256 <> 0) AS f_user_id FROM gone GROUP BY org_id, of_skill, (start_s / 86400) * 86400, workspace_id, harness, skill, skill_version, command, mcp, tool, model, user_id
ON CONFLICT ON CONSTRAINT skill_rollup_key DO UPDATE SET spans = skill_rollup.spans + EXCLUDED.spans, inv = skill_rollup.inv + EXCLUDED.inv, err = skill_rollup.err + EXCLUDED.err, tool_calls = skill_rollup.tool_calls + EXCLUDED.tool_calls, tokens = skill_rollup.tokens + EXCLUDED.tokens, f_trace = skill_rollup.f_trace + EXCLUDED.f_trace, f_harness = skill_rollup.f_harness + EXCLUDED.f_harness, f_skill = skill_rollup.f_skill + EXCLUDED.f_skill, f_skill_version = skill_rollup.f_skill_version + EXCLUDED.f_skill_version, f_command = skill_rollup.f_command + EXCLUDED.f_command, f_mcp = skill_rollup.f_mcp + EXCLUDED.f_mcp, f_tool = skill_rollup.f_tool + EXCLUDED.f_tool, f_model = skill_rollup.f_model + EXCLUDED.f_model, f_user_id = skill_rollup.f_user_id + EXCLUDED.f_user_id;
DELETE FROM skill_rollup WHERE spans = 0;
DELETE FROM skill_special p USING resent_traces r WHERE p.org_id = r.org_id AND p.trace_key = r.trace_id::uuid;
UPDATE trace_skills SET xid = pg_current_xact_id() WHERE (org_id, trace_id) IN (SELECT org_id, trace_id FROM resent_traces);

CREATE UNIQUE INDEX spans_identity ON spans (trace_id, span_id, org_id, start_s);
DROP INDEX spans_trace;
ALTER TABLE metric_points ADD COLUMN point_key TEXT;
CREATE UNIQUE INDEX metric_points_identity ON metric_points (org_id, point_key, time_s);
