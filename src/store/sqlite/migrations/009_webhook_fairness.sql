-- Registry schema, version 9: a fair webhook outbox (src/store/insight-port.ts, docs/webhooks.md).
-- A claim takes the oldest due delivery of each subscription with none in flight, so it walks a
-- subscription's deliveries by due time and looks its leased ones up; an organization's deliveries
-- are counted against its cap. `webhook_subscription_health` holds a subscription's consecutive
-- failed attempts and the pause they earned: bookkeeping no answer shows, so it takes no
-- generation trigger (migration 008), like the outbox.
-- Never edit once released: add a new numbered file instead.
DROP INDEX webhook_deliveries_due;
DROP INDEX webhook_deliveries_subscription;
CREATE INDEX webhook_deliveries_subscription_due ON webhook_deliveries(subscription_id, next_attempt_ms, id);
CREATE INDEX webhook_deliveries_subscription_leased ON webhook_deliveries(subscription_id, leased_until_ms);
CREATE INDEX webhook_deliveries_org ON webhook_deliveries(org_id);

CREATE TABLE webhook_subscription_health (
  subscription_id TEXT PRIMARY KEY REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  paused_until_ms INTEGER NOT NULL DEFAULT 0
);
