-- The trace store's watermark (TraceStore.watermark): moved by every replica after each write,
-- read by the response cache to key statistics. A sequence, so writers never wait on each other.
CREATE SEQUENCE IF NOT EXISTS trace_writes;
