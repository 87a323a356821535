-- Harness metric points (Claude Code's counters, docs/send-telemetry.md): one delta per session,
-- counter and export interval. Statistics join them to the sessions of a skill's spans.
CREATE TABLE metric_points (org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, session_id VARCHAR NOT NULL,
  metric VARCHAR NOT NULL, time_s BIGINT NOT NULL, value DOUBLE NOT NULL);
