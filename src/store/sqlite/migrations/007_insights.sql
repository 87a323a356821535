-- Registry schema, version 7: insights and their webhook deliveries (src/store/insight-port.ts).
-- `insights` rows are immutable; their id is derived from what they are about, so a recomputation
-- stores nothing new. `webhook_deliveries` is the outbox: a row is written in the transaction that
-- stores its insight and removed once delivered (or given up); `leased_until_ms` keeps a claimed
-- row from a second sender until the lease ends. Times: Unix seconds (`_s`), Unix milliseconds
-- (`_ms`) or ISO 8601 UTC text with milliseconds (`_at`).
-- Never edit once released: add a new numbered file instead.
CREATE TABLE insights (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  subject_type TEXT NOT NULL CHECK (subject_type IN ('skill', 'agent', 'tool')),
  subject_id TEXT NOT NULL,
  subject_server TEXT,
  window_start_s INTEGER NOT NULL,
  window_end_s INTEGER NOT NULL,
  payload_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
-- The feed of a scope (newest window first), and the insights of one subject.
CREATE INDEX insights_feed ON insights(org_id, workspace_id, window_end_s DESC, id);
CREATE INDEX insights_subject ON insights(org_id, subject_type, subject_id, window_end_s DESC, id);

-- `secret_salt`: the signing secret is derived from the service's key and it, never stored.
CREATE TABLE webhook_subscriptions (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  url TEXT NOT NULL,
  kinds_json TEXT NOT NULL,
  subjects_json TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  secret_salt TEXT NOT NULL
);
CREATE INDEX webhook_subscriptions_workspace ON webhook_subscriptions(org_id, workspace_id, created_at, id);

CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  insight_id TEXT NOT NULL REFERENCES insights(id),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms INTEGER NOT NULL,
  enqueued_ms INTEGER NOT NULL,
  leased_until_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_ms, id);
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries(subscription_id);

-- Detection's state: where each organization's runs left off, per-workspace rule overrides, and
-- named leases (one replica at a time runs detection).
CREATE TABLE detection_cursors (org_id TEXT PRIMARY KEY, cursor_s INTEGER NOT NULL);
CREATE TABLE detection_settings (
  org_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  settings_json TEXT NOT NULL,
  PRIMARY KEY (org_id, workspace_id)
);
CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_ms INTEGER NOT NULL);
