
CREATE TABLE spans_v2 (seq BIGINT NOT NULL, org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, trace_key UHUGEINT NOT NULL,
  span_id VARCHAR NOT NULL, parent_span_id VARCHAR, name VARCHAR, start_s BIGINT NOT NULL, harness INTEGER, skill INTEGER, skill_version INTEGER, command INTEGER, mcp INTEGER,
  tool INTEGER, model INTEGER, user_id VARCHAR, session_id VARCHAR, category VARCHAR NOT NULL, is_error BOOLEAN NOT NULL, tokens BIGINT NOT NULL, cost DOUBLE NOT NULL, duration_ms DOUBLE NOT NULL);
CREATE TABLE dim_values (id INTEGER NOT NULL, value VARCHAR NOT NULL);
INSERT INTO dim_values SELECT row_number() OVER (ORDER BY value)::INTEGER, value
  FROM (SELECT harness AS value FROM spans UNION SELECT skill AS value FROM spans UNION SELECT command AS value FROM spans UNION SELECT mcp AS value FROM spans UNION SELECT tool AS value FROM spans UNION SELECT model AS value FROM spans) WHERE value IS NOT NULL;
-- Version 1 only ever appended, so rowid is unique and in ingestion order: a streaming copy.
INSERT INTO spans_v2 SELECT rowid + 1, org_id, workspace_id, ((('0x' || substr(trace_id, 1, 16))::UBIGINT::UHUGEINT << 64) | ('0x' || substr(trace_id, 17, 16))::UBIGINT::UHUGEINT), span_id, parent_span_id, name,
  start_s, (SELECT id FROM dim_values WHERE value = v1.harness), (SELECT id FROM dim_values WHERE value = v1.skill), skill_version, (SELECT id FROM dim_values WHERE value = v1.command), (SELECT id FROM dim_values WHERE value = v1.mcp), (SELECT id FROM dim_values WHERE value = v1.tool), (SELECT id FROM dim_values WHERE value = v1.model), user_id, session_id, category, is_error, tokens, cost, duration_ms FROM spans v1;
DROP TABLE spans;
ALTER TABLE spans_v2 RENAME TO spans;
CREATE TABLE trace_skills_v2 (seq BIGINT NOT NULL, org_id VARCHAR NOT NULL, trace_key UHUGEINT NOT NULL, skill VARCHAR NOT NULL,
  skill_version INTEGER, start_s BIGINT NOT NULL);
INSERT INTO trace_skills_v2 SELECT 0, org_id, ((('0x' || substr(trace_id, 1, 16))::UBIGINT::UHUGEINT << 64) | ('0x' || substr(trace_id, 17, 16))::UBIGINT::UHUGEINT), skill, skill_version, start_s FROM trace_skills;
DROP TABLE trace_skills;
ALTER TABLE trace_skills_v2 RENAME TO trace_skills;
-- One integer per (organization, skill): zone maps keep only an 8-byte prefix of a string, too
-- short to tell ids like skill-0001 and skill-0013 apart, but prune exactly on integers.
CREATE TABLE skill_keys (org_id VARCHAR NOT NULL, skill VARCHAR NOT NULL, key INTEGER NOT NULL);
CREATE TABLE skill_spans (of_key INTEGER NOT NULL, of_versions INTEGER[] NOT NULL, workspace_id VARCHAR NOT NULL,
  trace_key UHUGEINT NOT NULL, start_s BIGINT NOT NULL, harness INTEGER, skill INTEGER, skill_version INTEGER, command INTEGER, mcp INTEGER,
  tool INTEGER, model INTEGER, user_id VARCHAR, session_id VARCHAR, is_invocation BOOLEAN NOT NULL, is_tool_call BOOLEAN NOT NULL, is_error BOOLEAN NOT NULL, tokens BIGINT NOT NULL, cost DOUBLE NOT NULL, duration_ms DOUBLE NOT NULL);
-- The days each sealed step put a (skill, trace) pair's rows on, and the pairs whose rows span more
-- than one UTC day: the only traces a day or week bucket can split (see stats-sql.ts totals).
CREATE TABLE skill_trace_days (of_key INTEGER NOT NULL, trace_key UHUGEINT NOT NULL, min_day INTEGER NOT NULL, max_day INTEGER NOT NULL);
CREATE TABLE skill_crossing (of_key INTEGER NOT NULL, trace_key UHUGEINT NOT NULL);
CREATE TABLE sealed (seq BIGINT NOT NULL);
INSERT INTO sealed VALUES (0);