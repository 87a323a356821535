-- Registry schema, version 13: what insight retention (InsightStore.pruneInsights) reads. The
-- oldest windows first, a batch at a time; and the deliveries of an insight, which go with it
-- (without this index every insight deleted would read the whole outbox, for them and for the
-- foreign key's check).
-- Never edit once released: add a new numbered file instead.
CREATE INDEX insights_window_end ON insights(window_end_s, id);
CREATE INDEX webhook_deliveries_insight ON webhook_deliveries(insight_id);
