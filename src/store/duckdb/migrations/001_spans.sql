
CREATE TABLE spans (
  org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, trace_id VARCHAR NOT NULL, span_id VARCHAR NOT NULL,
  parent_span_id VARCHAR, name VARCHAR, start_s BIGINT NOT NULL, duration_ms DOUBLE NOT NULL, category VARCHAR NOT NULL,
  harness VARCHAR, skill VARCHAR, skill_version INTEGER, command VARCHAR, mcp VARCHAR, tool VARCHAR, model VARCHAR,
  user_id VARCHAR, session_id VARCHAR, tokens BIGINT NOT NULL, cost DOUBLE NOT NULL, is_error BOOLEAN NOT NULL);
CREATE TABLE trace_skills (org_id VARCHAR NOT NULL, skill VARCHAR NOT NULL, skill_version INTEGER, trace_id VARCHAR NOT NULL, start_s BIGINT NOT NULL);