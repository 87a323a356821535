-- Harness metric points (Claude Code's counters, docs/send-telemetry.md): one delta per session,
-- counter and export interval. Statistics join them to the sessions of a skill's spans.
CREATE TABLE metric_points (
  org_id TEXT NOT NULL, workspace_id TEXT NOT NULL, session_id TEXT NOT NULL, metric TEXT NOT NULL,
  time_s BIGINT NOT NULL, value DOUBLE PRECISION NOT NULL);
CREATE INDEX metric_points_session ON metric_points (org_id, session_id, time_s);
