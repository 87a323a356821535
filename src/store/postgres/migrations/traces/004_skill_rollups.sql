-- The rollups' key treats nulls as equal (UNIQUE NULLS NOT DISTINCT), which PostgreSQL 15 brought.
DO $$ BEGIN
  IF current_setting('server_version_num')::int < 150000 THEN
    RAISE EXCEPTION 'the gateway needs PostgreSQL 15 or newer; this server is %', current_setting('server_version');
  END IF;
END $$;
-- Rollups of the sealed layout (src/store/postgres/rollups.ts): what statistics can sum instead of
-- reading every span of a skill's range.
-- skill_spans.firsts: bit 0 marks one span of each (skill, trace) pair, bit 1 + i one span of each
-- (pair, value of the i-th dimension of rollups.ts), among all the pair's sealed spans; sealing
-- writes a pair's spans whole, so the marks count distinct traces as sums.
ALTER TABLE skill_spans ADD COLUMN firsts INTEGER NOT NULL DEFAULT 0;
-- Everything is sealed again, with marks and sums, by the next steps; emptied first, so the indexes
-- below are built on an empty table (statistics stay exact
-- meanwhile: they read the unsealed spans from `spans`).
TRUNCATE skill_spans;
UPDATE sealed SET w = '0';
-- One row per (skill, UTC day, workspace, dimension values) of the sealed spans: their additive
-- measures and the number of marked spans per bit. Sealing and retention keep it equal to the sums
-- of skill_spans (rows reaching zero spans are deleted).
CREATE TABLE skill_rollup (
  org_id TEXT NOT NULL, of_skill TEXT NOT NULL, day_s BIGINT NOT NULL, workspace_id TEXT NOT NULL,
  harness TEXT, skill TEXT, skill_version INTEGER, command TEXT, mcp TEXT, tool TEXT, model TEXT, user_id TEXT,
  spans BIGINT NOT NULL, inv BIGINT NOT NULL, err BIGINT NOT NULL, tool_calls BIGINT NOT NULL, tokens NUMERIC NOT NULL,
  f_trace BIGINT NOT NULL, f_harness BIGINT NOT NULL, f_skill BIGINT NOT NULL, f_skill_version BIGINT NOT NULL,
  f_command BIGINT NOT NULL, f_mcp BIGINT NOT NULL, f_tool BIGINT NOT NULL, f_model BIGINT NOT NULL, f_user_id BIGINT NOT NULL,
  -- The key, with the sums as included columns: a query's days of one skill are read from the index alone.
  CONSTRAINT skill_rollup_key UNIQUE NULLS NOT DISTINCT
    (org_id, of_skill, day_s, workspace_id, harness, skill, skill_version, command, mcp, tool, model, user_id)
    INCLUDE (spans, inv, err, tool_calls, tokens, f_trace, f_harness, f_skill, f_skill_version, f_command, f_mcp,
      f_tool, f_model, f_user_id));
CREATE INDEX skill_rollup_empty ON skill_rollup (org_id) WHERE spans = 0;
-- The (skill, trace) pairs whose marks a sum cannot use: sealed spans on more than one UTC day or in
-- more than one workspace, or spans removed by retention. Statistics count them from their rows.
-- [first_s, last_s] holds the start of every sealed span of the pair: a query reads the pairs of its range.
CREATE TABLE skill_special (org_id TEXT NOT NULL, of_skill TEXT NOT NULL, trace_key UUID NOT NULL,
  first_s BIGINT NOT NULL, last_s BIGINT NOT NULL, PRIMARY KEY (org_id, of_skill, trace_key));
CREATE INDEX skill_special_time ON skill_special (org_id, of_skill, last_s);
-- Percentiles read the invocations of a range from this index alone (durations with every column a
-- summed query may group or filter by).
CREATE INDEX skill_spans_invocations ON skill_spans (org_id, of_skill, start_s)
  INCLUDE (duration_ms, workspace_id, harness, skill, skill_version, command, mcp, tool, model, user_id) WHERE is_invocation;
-- Reads from indexes alone skip the table only on pages the visibility map marks all-visible:
-- autovacuum visits these tables after 1 % of new or changed rows instead of 20 %.
ALTER TABLE skill_spans SET (autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_scale_factor = 0.01);
ALTER TABLE skill_rollup SET (autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_scale_factor = 0.01);
-- Only gateways that keep the rollups write skill_spans: an older replica's sealing step or
-- retention (during a rolling upgrade) would change rows without their sums, so its statements are
-- refused (its statistics stay exact, read from rows; this release seals and prunes). Writers set
-- gateway.rollups = 'kept' in the transaction that updates skill_rollup and skill_special too.
CREATE OR REPLACE FUNCTION skill_spans_writers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('gateway.rollups', true) IS DISTINCT FROM 'kept' THEN
    RAISE EXCEPTION 'skill_spans is written only by gateways that keep its rollups (trace migration 004)';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER skill_spans_writers BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON skill_spans
  FOR EACH STATEMENT EXECUTE FUNCTION skill_spans_writers();
