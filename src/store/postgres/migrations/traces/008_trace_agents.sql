-- The agents each trace belongs to: a trace belongs to an agent when any of its spans names it
-- (spans.agent), for the callers who read the workspace of such a span (`workspace_id`). Written with the spans (span-writes.ts), one row per (trace, agent) of each
-- write; statistics of an agent read the spans of its traces (agent-rows.ts), never the
-- per-skill layout or its rollups. `start_s` is the start of one of the trace's spans that names
-- the agent (retention keeps the row while the trace has spans). The traces stored before are
-- mapped here.
CREATE TABLE trace_agents (org_id TEXT NOT NULL, agent TEXT NOT NULL, trace_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL, start_s BIGINT NOT NULL);
INSERT INTO trace_agents (org_id, agent, trace_id, workspace_id, start_s)
  SELECT org_id, agent, trace_id, workspace_id, min(start_s) FROM spans WHERE agent IS NOT NULL
  GROUP BY org_id, agent, trace_id, workspace_id;
CREATE INDEX trace_agents_lookup ON trace_agents (org_id, agent, trace_id);
CREATE INDEX trace_agents_trace ON trace_agents (org_id, trace_id);
