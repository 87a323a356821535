-- Registry schema, version 11: an insight's detail as a column, what tells two insights of one
-- kind and subject apart beside the window (an `evaluation_drop`'s evaluation name; null for the
-- other kinds), so that detection's cooldown finds the last insight of one (workspace, kind,
-- subject, detail) by one index lookup however many other details a subject has.
-- Never edit once released: add a new numbered file instead.
ALTER TABLE insights ADD COLUMN detail TEXT;
UPDATE insights SET detail = payload_json ->> '$.evaluation_name' WHERE kind = 'evaluation_drop';
CREATE INDEX insights_series ON insights(org_id, workspace_id, kind, subject_type, subject_id, detail, window_end_s DESC);
