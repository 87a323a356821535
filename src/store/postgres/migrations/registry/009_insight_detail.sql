-- Registry schema, version 9 (PostgreSQL): an insight's detail as a column, as SQLite's migration
-- 011 (an `evaluation_drop`'s evaluation name; null for the other kinds), so that detection's
-- cooldown finds the last insight of one (workspace, kind, subject, detail) by one index lookup.
-- Never edit once released: add a new numbered file.
ALTER TABLE insights ADD COLUMN detail TEXT;
UPDATE insights SET detail = payload_json::jsonb ->> 'evaluation_name' WHERE kind = 'evaluation_drop';
CREATE INDEX insights_series ON insights (org_id, workspace_id, kind, subject_type, subject_id, detail, window_end_s DESC);
