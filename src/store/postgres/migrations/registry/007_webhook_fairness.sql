-- Registry schema, version 7 (PostgreSQL): a fair webhook outbox, as SQLite's migration 009. A
-- claim takes the oldest due delivery of each subscription with none in flight (walking a
-- subscription's deliveries by due time, looking its leased ones up); an organization's deliveries
-- are counted against its cap. `webhook_subscription_health` holds a subscription's consecutive
-- failed attempts and the pause they earned (bookkeeping: it moves no registry generation).
-- Never edit once released: add a new numbered file.
DROP INDEX webhook_deliveries_due;
DROP INDEX webhook_deliveries_subscription;
CREATE INDEX webhook_deliveries_subscription_due ON webhook_deliveries (subscription_id, next_attempt_ms, id);
CREATE INDEX webhook_deliveries_subscription_leased ON webhook_deliveries (subscription_id, leased_until_ms);
CREATE INDEX webhook_deliveries_org ON webhook_deliveries (org_id);

CREATE TABLE webhook_subscription_health (
  subscription_id TEXT COLLATE "C" PRIMARY KEY REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  consecutive_failures INTEGER NOT NULL DEFAULT 0, paused_until_ms BIGINT NOT NULL DEFAULT 0);
