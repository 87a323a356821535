-- One MCP call, one tool call (src/store/call-pairs.ts): the sides tool call spans take in calls,
-- one row per side on a UTC day (the key, a 128-bit hash of organization, workspace, tool, call and
-- day; client or server; the span's identity), appended with the spans. The writer finds a new
-- side's other side here (call-sides.ts), and a call with both supersedes one of them. Spans
-- stored before this release have no sides: they keep counting as they did.
CREATE TABLE tool_call_sides (day INTEGER NOT NULL, call_key UHUGEINT NOT NULL, is_server BOOLEAN NOT NULL,
  org_id VARCHAR NOT NULL, trace_key UHUGEINT NOT NULL, span_id VARCHAR NOT NULL, start_s BIGINT NOT NULL);
