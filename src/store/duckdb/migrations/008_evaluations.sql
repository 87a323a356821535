-- Evaluations (the GenAI conventions' gen_ai.evaluation.result events, store/evaluation-row.ts): one
-- row per evaluation, its identity (org_id, eval_key, time_s). The trace it evaluates is a 128-bit
-- key, as in `spans`; statistics join it to the traces of a subject's spans in the same workspace.
CREATE TABLE evaluations (org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, eval_key VARCHAR NOT NULL,
  trace_key UHUGEINT NOT NULL, span_id VARCHAR, response_id VARCHAR, name VARCHAR NOT NULL, score DOUBLE,
  label VARCHAR, passed BOOLEAN, explanation VARCHAR, time_s BIGINT NOT NULL);
