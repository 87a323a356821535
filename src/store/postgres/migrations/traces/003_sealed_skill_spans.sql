-- The per-skill layout statistics read (src/store/postgres/sealing.ts): every span of a skill's
-- traces, copied next to the skill's other spans by a background sealer, so that a query reads the
-- rows of one skill and time range instead of joining every span of the range with the mappings.
-- `xid` is the inserting transaction: rows below the sealed watermark `sealed.w` (a snapshot's
-- xmin, so no transaction below it is still running) are sealed, the rest are read from `spans`.
-- Existing rows take this migration's transaction id and are sealed by the first step.
ALTER TABLE spans ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE trace_skills ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
-- skill_spans keeps trace ids as uuid: only the 32 lowercase hex digits ingestion produces are
-- stored (NOT VALID: rows already stored were checked by ingestion and are not rescanned).
ALTER TABLE spans ADD CONSTRAINT spans_trace_id_hex CHECK (trace_id ~ '^[0-9a-f]{32}$') NOT VALID;
ALTER TABLE trace_skills ADD CONSTRAINT trace_skills_trace_id_hex CHECK (trace_id ~ '^[0-9a-f]{32}$') NOT VALID;
CREATE INDEX spans_xid ON spans (xid);
CREATE INDEX trace_skills_xid ON trace_skills (xid);
CREATE INDEX trace_skills_trace ON trace_skills (org_id, trace_id);
CREATE TABLE skill_spans (
  org_id TEXT NOT NULL, of_skill TEXT NOT NULL, of_versions INTEGER[] NOT NULL, trace_key UUID NOT NULL,
  workspace_id TEXT NOT NULL, start_s BIGINT NOT NULL, harness TEXT, skill TEXT, skill_version INTEGER,
  command TEXT, mcp TEXT, tool TEXT, model TEXT, user_id TEXT, session_id TEXT, is_invocation BOOLEAN NOT NULL,
  is_tool_call BOOLEAN NOT NULL, is_error BOOLEAN NOT NULL, tokens BIGINT NOT NULL, cost DOUBLE PRECISION NOT NULL,
  duration_ms DOUBLE PRECISION NOT NULL);
CREATE INDEX skill_spans_time ON skill_spans (org_id, of_skill, start_s);
CREATE INDEX skill_spans_trace ON skill_spans (org_id, of_skill, trace_key);
CREATE TABLE sealed (w xid8 NOT NULL);
INSERT INTO sealed VALUES ('0');
