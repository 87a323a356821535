-- The agents each trace belongs to: a trace belongs to an agent when any of its spans names it
-- (spans.agent), for the callers who read the workspace of such a span (`workspace_id`). Written with the spans (append.ts), one row per (trace, agent) of each append;
-- statistics of an agent read the spans of its traces (agent-rows.ts). `agent` is a dim_values
-- code, as in spans; `start_s` the start of one of the trace's spans that names the agent
-- (retention keeps the row while the trace has spans). The traces stored before are mapped here.
CREATE TABLE trace_agents (org_id VARCHAR NOT NULL, trace_key UHUGEINT NOT NULL, agent INTEGER NOT NULL,
  workspace_id VARCHAR NOT NULL, start_s BIGINT NOT NULL);
INSERT INTO trace_agents SELECT org_id, trace_key, agent, workspace_id, min(start_s) FROM spans
  WHERE agent IS NOT NULL GROUP BY org_id, trace_key, agent, workspace_id ORDER BY org_id, agent;
