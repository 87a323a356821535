-- Raw spans and metric points in monthly range partitions (src/store/postgres/partitions.ts):
-- retention drops a month whole instead of deleting its rows, and each month's indexes stay the
-- size of a month. Rows of a month with no partition land in the default partition, so no insert
-- ever fails for its time.
--
-- A month's partition is created ahead of its rows, in three steps, so that no exclusive lock is
-- held while the default partition is read:
-- 1. trace_month_guard answers 'exists', 'in default' when the default partition holds rows of the
--    month (those stay where they are: rows moved into a new partition would be missed by
--    statements planned before the move, and by REPEATABLE READ snapshots taken before it, and so
--    the month stays unpartitioned), or 'guarded': a CHECK excluding the month is added to the
--    default partition NOT VALID (a brief exclusive lock, no scan);
-- 2. trace_month_validate validates that CHECK, in a transaction of its own (a scan under SHARE
--    UPDATE EXCLUSIVE: readers and writers go on);
-- 3. trace_month_attach creates the month's table with a CHECK of its range and attaches it:
--    ATTACH trusts both CHECKs and scans nothing (it locks the parent only in SHARE UPDATE
--    EXCLUSIVE mode, the default partition briefly); then the guard is dropped.
-- trace_month_partition does the three in one transaction (the migration's, on empty tables).
-- One creator at a time per schema: the advisory lock of 'gateway.trace_partitions:' || schema.
-- The names of one month of `parent`: its partition, the guard's name, the default partition
-- (schema-qualified), and the month's end. `lo` must start a UTC month.
CREATE FUNCTION trace_month(parent TEXT, lo BIGINT, OUT part TEXT, OUT guard TEXT, OUT fallback TEXT, OUT hi BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
  first TIMESTAMP := to_timestamp(lo) AT TIME ZONE 'UTC';
BEGIN
  IF first <> date_trunc('month', first) THEN
    RAISE EXCEPTION 'trace_month: % is not the start of a UTC month', lo;
  END IF;
  hi := extract(epoch FROM first + interval '1 month')::bigint;
  part := parent || '_p' || to_char(first, 'YYYYMM');
  guard := part || '_guard';
  fallback := format('%I.%I', current_schema(), parent || '_default');
END $$;

-- Drops the month's guard if there is one (even a DROP of nothing locks the table exclusively).
CREATE FUNCTION trace_month_unguard(parent TEXT, lo BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
  m RECORD := trace_month(parent, lo);
BEGIN
  IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = m.fallback::regclass AND conname = m.guard) THEN
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', m.fallback, m.guard);
  END IF;
END $$;

-- Step 2: the guard validated (raises check_violation when the default partition holds a row of the month).
CREATE FUNCTION trace_month_validate(parent TEXT, lo BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
  m RECORD := trace_month(parent, lo);
BEGIN
  EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', m.fallback, m.guard);
END $$;

CREATE FUNCTION trace_month_guard(parent TEXT, col TEXT, lo BIGINT) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
  m RECORD := trace_month(parent, lo);
  occupied BOOLEAN;
BEGIN
  IF to_regclass(format('%I.%I', current_schema(), m.part)) IS NOT NULL THEN RETURN 'exists'; END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE %I >= %s AND %I < %s)', m.fallback, col, lo, col, m.hi)
    INTO occupied;
  IF occupied THEN
    -- A guard of an earlier attempt would refuse the month's rows there.
    PERFORM trace_month_unguard(parent, lo);
    RETURN 'in default';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = m.fallback::regclass AND conname = m.guard) THEN
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%I < %s OR %I >= %s) NOT VALID',
      m.fallback, m.guard, col, lo, col, m.hi);
  END IF;
  RETURN 'guarded';
END $$;

CREATE FUNCTION trace_month_attach(parent TEXT, col TEXT, lo BIGINT) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
  m RECORD := trace_month(parent, lo);
BEGIN
  IF to_regclass(format('%I.%I', current_schema(), m.part)) IS NOT NULL THEN RETURN 'exists'; END IF;
  EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
    current_schema(), m.part, current_schema(), parent);
  EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I CHECK (%I >= %s AND %I < %s)',
    current_schema(), m.part, m.part || '_range', col, lo, col, m.hi);
  -- Without a validated guard ATTACH reads the default partition: a row of the month written
  -- there meanwhile fails it, and the month stays in the default partition.
  BEGIN
    EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%s) TO (%s)',
      current_schema(), parent, current_schema(), m.part, lo, m.hi);
  EXCEPTION WHEN check_violation THEN
    EXECUTE format('DROP TABLE %I.%I', current_schema(), m.part);
    PERFORM trace_month_unguard(parent, lo);
    RETURN 'in default';
  END;
  PERFORM trace_month_unguard(parent, lo);
  RETURN 'created';
END $$;

CREATE FUNCTION trace_month_partition(parent TEXT, col TEXT, lo BIGINT) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
  outcome TEXT;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('gateway.trace_partitions:' || current_schema()));
  outcome := trace_month_guard(parent, col, lo);
  IF outcome <> 'guarded' THEN RETURN outcome; END IF;
  PERFORM trace_month_validate(parent, lo);
  RETURN trace_month_attach(parent, col, lo);
END $$;

-- The tables, rebuilt partitioned: the same columns in the same order (xid last), the rows copied
-- with their xid, so the sealed watermark and skill_spans stay as they are.
ALTER TABLE spans RENAME TO spans_v4;
ALTER TABLE metric_points RENAME TO metric_points_v4;
CREATE TABLE spans (
  org_id TEXT NOT NULL, workspace_id TEXT NOT NULL, trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_span_id TEXT,
  name TEXT, start_s BIGINT NOT NULL, duration_ms DOUBLE PRECISION NOT NULL, category TEXT NOT NULL,
  harness TEXT, skill TEXT, skill_version INTEGER, command TEXT, mcp TEXT, tool TEXT, model TEXT,
  user_id TEXT, session_id TEXT, tokens BIGINT NOT NULL, cost DOUBLE PRECISION NOT NULL, is_error BOOLEAN NOT NULL,
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  CONSTRAINT spans_trace_id_hex CHECK (trace_id ~ '^[0-9a-f]{32}$')) PARTITION BY RANGE (start_s);
CREATE TABLE spans_default PARTITION OF spans DEFAULT;
CREATE TABLE metric_points (
  org_id TEXT NOT NULL, workspace_id TEXT NOT NULL, session_id TEXT NOT NULL, metric TEXT NOT NULL,
  time_s BIGINT NOT NULL, value DOUBLE PRECISION NOT NULL) PARTITION BY RANGE (time_s);
CREATE TABLE metric_points_default PARTITION OF metric_points DEFAULT;

-- Partitions for the months the stored rows fall in, from 24 months back to 2 ahead of the time
-- of this migration, created empty before the copy (partitions.ts creates the months of its own
-- window, a few around now, at start and hourly).
DO $$
DECLARE
  t RECORD;
  m BIGINT;
BEGIN
  FOR t IN SELECT * FROM (VALUES ('spans', 'start_s', 'spans_v4'), ('metric_points', 'time_s', 'metric_points_v4')) v(parent, col, old) LOOP
    FOR m IN EXECUTE format(
      'SELECT DISTINCT extract(epoch FROM date_trunc(''month'', to_timestamp(%I) AT TIME ZONE ''UTC''))::bigint FROM %I
       WHERE %I >= extract(epoch FROM date_trunc(''month'', now() AT TIME ZONE ''UTC'') - interval ''24 months'')
       AND %I < extract(epoch FROM date_trunc(''month'', now() AT TIME ZONE ''UTC'') + interval ''3 months'')',
      t.col, t.old, t.col, t.col) LOOP
      PERFORM trace_month_partition(t.parent, t.col, m);
    END LOOP;
  END LOOP;
END $$;
INSERT INTO spans (org_id, workspace_id, trace_id, span_id, parent_span_id, name, start_s, duration_ms, category, harness,
  skill, skill_version, command, mcp, tool, model, user_id, session_id, tokens, cost, is_error, xid)
SELECT org_id, workspace_id, trace_id, span_id, parent_span_id, name, start_s, duration_ms, category, harness,
  skill, skill_version, command, mcp, tool, model, user_id, session_id, tokens, cost, is_error, xid FROM spans_v4;
INSERT INTO metric_points (org_id, workspace_id, session_id, metric, time_s, value)
SELECT org_id, workspace_id, session_id, metric, time_s, value FROM metric_points_v4;
DROP TABLE spans_v4;
DROP TABLE metric_points_v4;
-- The indexes, built after the copy (each partition's own, attached to these).
CREATE INDEX spans_trace ON spans (trace_id);
CREATE INDEX spans_org_time ON spans (org_id, start_s);
CREATE INDEX spans_xid ON spans (xid);
CREATE INDEX metric_points_session ON metric_points (org_id, session_id, time_s);
