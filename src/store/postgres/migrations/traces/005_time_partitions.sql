-- Raw spans and metric points in monthly range partitions (src/store/postgres/partitions.ts):
-- retention drops a month whole instead of deleting its rows, and each month's indexes stay the
-- size of a month. Rows of a month with no partition land in the default partition, so no insert
-- ever fails for its time.
--
-- trace_month_partition(parent, column, month start) creates the partition of one UTC month, ahead
-- of its rows: a table of its own first (with a CHECK of its range, so attaching it scans nothing
-- of it), then attached (which locks the parent only in SHARE UPDATE EXCLUSIVE mode; CREATE TABLE
-- ... PARTITION OF would take ACCESS EXCLUSIVE). It answers 'exists', 'created', or 'in default'
-- when the default partition already holds rows of the month: those stay where they are (rows
-- moved into a new partition would be missed by statements planned before the move, and by
-- REPEATABLE READ snapshots taken before it), and so does the month. One caller at a time per
-- schema (an advisory lock), so replicas do not race.
CREATE FUNCTION trace_month_partition(parent TEXT, col TEXT, lo BIGINT) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
  first TIMESTAMP := to_timestamp(lo) AT TIME ZONE 'UTC';
  hi BIGINT := extract(epoch FROM first + interval '1 month')::bigint;
  part TEXT := parent || '_p' || to_char(first, 'YYYYMM');
  occupied BOOLEAN;
BEGIN
  IF first <> date_trunc('month', first) THEN
    RAISE EXCEPTION 'trace_month_partition: % is not the start of a UTC month', lo;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('gateway.trace_partitions:' || current_schema()));
  IF to_regclass(format('%I.%I', current_schema(), part)) IS NOT NULL THEN RETURN 'exists'; END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I WHERE %I >= %s AND %I < %s)',
    current_schema(), parent || '_default', col, lo, col, hi) INTO occupied;
  IF occupied THEN RETURN 'in default'; END IF;
  EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
    current_schema(), part, current_schema(), parent);
  EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I CHECK (%I >= %s AND %I < %s)',
    current_schema(), part, part || '_range', col, lo, col, hi);
  -- ATTACH checks that the default partition holds no row of the month: a row written there since
  -- the check above (not yet committed then) fails it, and the month stays in the default partition.
  BEGIN
    EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%s) TO (%s)',
      current_schema(), parent, current_schema(), part, lo, hi);
  EXCEPTION WHEN check_violation THEN
    EXECUTE format('DROP TABLE %I.%I', current_schema(), part);
    RETURN 'in default';
  END;
  RETURN 'created';
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
