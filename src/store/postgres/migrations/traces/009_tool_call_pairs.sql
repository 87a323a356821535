-- One MCP call, one tool call (src/store/call-pairs.ts): the calls tool call spans take part in,
-- one row per call key (a 128-bit hash of organization, workspace, call and tool), with the
-- identities of the call's client and server spans once they are stored. Every write upserts the
-- keys of the tool call spans it stores; the key's uniqueness makes a writer wait for another
-- writing the same call, so whichever commits second sees the first's side and supersedes one of
-- them. Spans stored before this release have no rows: they keep counting as they did.
CREATE TABLE tool_call_pairs (call_key UUID PRIMARY KEY, org_id TEXT NOT NULL,
  client_trace_id TEXT, client_span_id TEXT, client_start_s BIGINT,
  server_trace_id TEXT, server_span_id TEXT, server_start_s BIGINT, last_s BIGINT NOT NULL);
CREATE INDEX tool_call_pairs_last ON tool_call_pairs (last_s);
