-- Registry schema, version 10 (PostgreSQL): what insight retention reads, as SQLite's migration
-- 013: the oldest windows first, a batch at a time, and the deliveries of an insight, which go
-- with it (the index also spares the foreign key's check a scan of the outbox per insight).
-- Never edit once released: add a new numbered file.
CREATE INDEX insights_window_end ON insights (window_end_s, id);
CREATE INDEX webhook_deliveries_insight ON webhook_deliveries (insight_id);
