-- Provider and agent dimensions and the cache token sums. The rollups (migration 004) do not keep
-- them: statistics that group or filter by provider or agent, or sum cache tokens, read rows.
ALTER TABLE spans ADD COLUMN provider TEXT, ADD COLUMN agent TEXT,
  ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0, ADD COLUMN cache_creation_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE skill_spans ADD COLUMN provider TEXT, ADD COLUMN agent TEXT,
  ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0, ADD COLUMN cache_creation_tokens BIGINT NOT NULL DEFAULT 0;
