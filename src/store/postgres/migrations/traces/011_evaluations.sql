-- Evaluations (the GenAI conventions' gen_ai.evaluation.result events, store/evaluation-row.ts): one
-- row per evaluation, its identity (org_id, eval_key, time_s) held by a unique index. The trace it
-- evaluates is a uuid, as `skill_spans.trace_key`; statistics join it to the traces of a subject's
-- spans in the same workspace, reading an organization's evaluations of a time range.
CREATE TABLE evaluations (
  org_id TEXT NOT NULL, workspace_id TEXT NOT NULL, eval_key TEXT NOT NULL, trace_key uuid NOT NULL,
  span_id TEXT, response_id TEXT, name TEXT NOT NULL, score DOUBLE PRECISION, label TEXT, passed BOOLEAN,
  explanation TEXT, time_s BIGINT NOT NULL);
CREATE UNIQUE INDEX evaluations_identity ON evaluations (org_id, eval_key, time_s);
CREATE INDEX evaluations_time ON evaluations (org_id, time_s);
