-- One MCP call, one tool call (src/store/call-pairs.ts): the calls tool call spans take part in,
-- one row per call key (a 128-bit hash of organization, workspace, call and tool), with the
-- identities of the call's client and server spans once they are stored. The writer upserts the
-- keys of every tool call span it stores; a row with both sides supersedes one of them. Spans
-- stored before this release have no rows: they keep counting as they did.
CREATE TABLE tool_call_pairs (call_key UHUGEINT PRIMARY KEY, org_id VARCHAR NOT NULL,
  client_trace_key UHUGEINT, client_span_id VARCHAR, client_start_s BIGINT,
  server_trace_key UHUGEINT, server_span_id VARCHAR, server_start_s BIGINT, last_s BIGINT NOT NULL);
