-- Provider and agent dimensions (dim_values codes, as the other encoded dimensions) and the cache
-- token sums, appended at the end of both span tables: sealing copies rows by position.
ALTER TABLE spans ADD COLUMN provider INTEGER;
ALTER TABLE spans ADD COLUMN agent INTEGER;
ALTER TABLE spans ADD COLUMN cache_read_tokens BIGINT DEFAULT 0;
ALTER TABLE spans ADD COLUMN cache_creation_tokens BIGINT DEFAULT 0;
ALTER TABLE skill_spans ADD COLUMN provider INTEGER;
ALTER TABLE skill_spans ADD COLUMN agent INTEGER;
ALTER TABLE skill_spans ADD COLUMN cache_read_tokens BIGINT DEFAULT 0;
ALTER TABLE skill_spans ADD COLUMN cache_creation_tokens BIGINT DEFAULT 0;
