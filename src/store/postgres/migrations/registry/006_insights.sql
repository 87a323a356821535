-- Registry schema, version 6 (PostgreSQL): insights and their webhook deliveries, as SQLite's
-- migration 007 (src/store/insight-port.ts). `insights` rows are immutable, their id derived from
-- what they are about; `webhook_deliveries` is the outbox, written in the transaction that stores
-- its insight, removed once delivered or given up, `leased_until_ms` keeping a claimed row from a
-- second sender until the lease ends. Text columns that lists order by use the "C" collation.
-- Never edit once released: add a new numbered file.
CREATE TABLE insights (
  id TEXT COLLATE "C" PRIMARY KEY, org_id TEXT NOT NULL, workspace_id TEXT NOT NULL, kind TEXT NOT NULL,
  subject_type TEXT NOT NULL CHECK (subject_type IN ('skill', 'agent', 'tool')), subject_id TEXT NOT NULL,
  subject_server TEXT, window_start_s BIGINT NOT NULL, window_end_s BIGINT NOT NULL, payload_json TEXT NOT NULL,
  created_at TEXT NOT NULL);
CREATE INDEX insights_feed ON insights (org_id, workspace_id, window_end_s DESC, id);
CREATE INDEX insights_subject ON insights (org_id, subject_type, subject_id, window_end_s DESC, id);

CREATE TABLE webhook_subscriptions (
  id TEXT COLLATE "C" PRIMARY KEY, org_id TEXT NOT NULL, workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  url TEXT NOT NULL, kinds_json TEXT NOT NULL, subjects_json TEXT NOT NULL, created_by TEXT NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL, secret_salt TEXT NOT NULL);
CREATE INDEX webhook_subscriptions_workspace ON webhook_subscriptions (org_id, workspace_id, created_at, id);

CREATE TABLE webhook_deliveries (
  id TEXT COLLATE "C" PRIMARY KEY, org_id TEXT NOT NULL,
  subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  insight_id TEXT NOT NULL REFERENCES insights(id), attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms BIGINT NOT NULL, enqueued_ms BIGINT NOT NULL, leased_until_ms BIGINT NOT NULL DEFAULT 0);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_ms, id);
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id);

CREATE TABLE detection_cursors (org_id TEXT PRIMARY KEY, cursor_s BIGINT NOT NULL);
CREATE TABLE detection_settings (
  org_id TEXT NOT NULL, workspace_id TEXT NOT NULL, settings_json TEXT NOT NULL, PRIMARY KEY (org_id, workspace_id));
CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_ms BIGINT NOT NULL);
