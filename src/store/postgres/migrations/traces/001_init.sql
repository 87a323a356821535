-- Trace schema, version 1 (PostgreSQL). Never edit once released: add a new numbered file.
CREATE TABLE spans (
  org_id TEXT NOT NULL, workspace_id TEXT NOT NULL, trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_span_id TEXT,
  name TEXT, start_s BIGINT NOT NULL, duration_ms DOUBLE PRECISION NOT NULL, category TEXT NOT NULL,
  harness TEXT, skill TEXT, skill_version INTEGER, command TEXT, mcp TEXT, tool TEXT, model TEXT,
  user_id TEXT, session_id TEXT, tokens BIGINT NOT NULL, cost DOUBLE PRECISION NOT NULL, is_error BOOLEAN NOT NULL);
CREATE INDEX spans_trace ON spans (trace_id);
CREATE INDEX spans_org_time ON spans (org_id, start_s);

CREATE TABLE trace_skills (org_id TEXT NOT NULL, skill TEXT NOT NULL, skill_version INTEGER, trace_id TEXT NOT NULL, start_s BIGINT NOT NULL);
CREATE INDEX trace_skills_lookup ON trace_skills (org_id, skill, skill_version, trace_id);
