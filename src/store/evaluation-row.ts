/**
 * One stored evaluation: a `gen_ai.evaluation.result` event (OpenTelemetry GenAI semantic
 * conventions) received on the logs signal (otlp/logs/evaluations.ts). It belongs to the trace it
 * evaluates: the statistics count it for a subject when its trace is one of the subject's traces,
 * for each group holding a selected span of that trace in its own workspace, in the bucket of its
 * own time (store/stats/evaluations.ts; the rule in docs/api.md).
 */
/** Measures of the evaluations of the selected spans' traces (the dimension `evaluation`: their names). */
export const EVALUATION_MEASURES = ['evaluation_score', 'evaluation_pass_rate'] as const;

export interface EvaluationRow {
  org_id: string;
  workspace_id: string;
  /**
   * The evaluation's identity within its organization, with `time_s`: a hash of the log record
   * (otlp/logs/evaluations.ts). A record delivered again is stored once.
   */
  key: string;
  /** The evaluated trace: 32 lowercase hex digits (the log record's trace id). */
  trace_id: string;
  /** The evaluated span (the log record's span id), when the record names one. */
  span_id: string | null;
  /** `gen_ai.response.id`: the completion evaluated. */
  response_id: string | null;
  /** `gen_ai.evaluation.name`: the `evaluation` dimension. */
  name: string;
  /** `gen_ai.evaluation.score.value`. */
  score: number | null;
  /** `gen_ai.evaluation.score.label`. */
  label: string | null;
  /** The label's verdict: true a pass, false a fail, null no verdict (otlp/logs/evaluations.ts). */
  passed: boolean | null;
  /** `gen_ai.evaluation.explanation`. */
  explanation: string | null;
  /** Unix seconds: the record's time. */
  time_s: number;
}
