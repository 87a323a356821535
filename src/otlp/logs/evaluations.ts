/**
 * The OpenTelemetry GenAI `gen_ai.evaluation.result` event on the logs signal, mapped and checked
 * (DESIGN §12) into what store/evaluation-row.ts keeps. The event is a log record whose event name
 * (the record's `event_name` field, else the older `event.name` attribute) is
 * `gen_ai.evaluation.result`; it carries `gen_ai.evaluation.name` (required),
 * `gen_ai.evaluation.score.value` and/or `gen_ai.evaluation.score.label`,
 * `gen_ai.evaluation.explanation` and `gen_ai.response.id`, and is emitted in the context of the
 * evaluated span (the record's trace and span ids). Runs where the body is decoded (the decode
 * worker); the sender's right to the workspace is checked by otlp/ingest.ts.
 *
 * Refused, with the reason: a missing name, a score that is not a finite number within
 * ±MAX_SCORE, neither a score nor a label, no trace id (a record linked by `gen_ai.response.id`
 * alone cannot be attributed to a trace: spans do not keep response ids), values over their
 * bounds. An evaluation that failed (`error.type` set) has no result: it is ignored, not stored.
 */
import { hash } from 'node:crypto';
import type { EvaluationRow } from '../../store/evaluation-row.ts';
import type { Attributes, AttrValue } from '../types.ts';
import { NUL_REFUSED, hasNul, timeRefused, type SpanBounds } from '../traces/mapping.ts';
import type { DecodedLogRecord } from './decode.ts';

/** The event name (semantic conventions: `EVENT_GEN_AI_EVALUATION_RESULT`). */
const EVALUATION_EVENT = 'gen_ai.evaluation.result';

/**
 * Labels that pass and that fail, compared trimmed and in lower case: the conventions' examples
 * (`pass`, `fail`, `correct`, `incorrect`, `relevant`, `not_relevant`) and their common spellings.
 * Any other label, or none, gives no verdict: the evaluation counts in `evaluation_score` (when
 * scored) and not in `evaluation_pass_rate`. A score never decides: scales differ between
 * evaluators (the conventions' own example score is 4.0, and a 1 may mean relevant in one system
 * and not relevant in another), so a threshold would pass or fail them silently.
 */
const PASS_LABELS = new Set(['pass', 'passed', 'correct', 'relevant', 'true', 'yes']);
const FAIL_LABELS = new Set(['fail', 'failed', 'incorrect', 'not_relevant', 'irrelevant', 'false', 'no']);

/** A label's verdict: true a pass, false a fail, null neither. */
export function verdictOf(label: string | null): boolean | null {
  const word = label?.trim().toLowerCase() ?? '';
  return PASS_LABELS.has(word) ? true : FAIL_LABELS.has(word) ? false : null;
}

/** The largest score magnitude stored (a sum of many stays exact enough, never infinite). */
const MAX_SCORE = 1e9;
/** The longest explanation stored, in UTF-8 bytes (an evaluator's paragraph, not a document). */
export const MAX_EXPLANATION_BYTES = 16_384;

/** An evaluation as a decode thread maps it: the reason it is refused, or what is stored. */
export type MappedEvaluation =
  | { invalid: string }
  | {
      invalid: null;
      /** Resource `workspace.id`, else null (the sender's default workspace). */
      workspace: string | null;
      fields: Omit<EvaluationRow, 'org_id' | 'workspace_id'>;
    };

const ID = /^[0-9a-f]+$/;
const bytes = (s: string | null) => (s === null ? 0 : Buffer.byteLength(s, 'utf8'));
const absent = (v: AttrValue | undefined) => v === undefined || v === null || v === '';
const text = (v: AttrValue | undefined): string | null => (absent(v) ? null : String(v));

/** Attributes in key order, an empty value as null (protobuf's empty AnyValue is '', JSON's `{}` null). */
const sortedEntries = (a: Attributes) =>
  [...a].map(([k, v]) => [k, v === '' ? null : v] as const).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));

/**
 * A record's identity: its ids, times, attributes and resource (in any order), hashed to 128 bits.
 * An exporter that sends the record again (a retried request, either encoding) sends the same one.
 */
function evaluationKey(r: DecodedLogRecord): string {
  const identity = JSON.stringify([
    r.traceId,
    r.spanId,
    String(r.timeNs),
    String(r.observedNs),
    sortedEntries(r.attributes),
    sortedEntries(r.resource),
  ]);
  return hash('sha256', identity).slice(0, 32);
}

/** Whether a decoded log record is an evaluation event. */
export const isEvaluation = (r: DecodedLogRecord): boolean => r.eventName === EVALUATION_EVENT;

/** The score: null when absent, else a finite number within ±MAX_SCORE, else why not. */
function scoreOf(v: AttrValue | undefined): number | null | { invalid: string } {
  if (v === undefined) return null;
  if (typeof v !== 'number')
    return { invalid: `gen_ai.evaluation.score.value must be a number, got ${v === null ? 'no value' : typeof v}` };
  if (Math.abs(v) > MAX_SCORE)
    return {
      invalid: `gen_ai.evaluation.score.value out of range (at most ${MAX_SCORE.toExponential()} in magnitude)`,
    };
  return v;
}

/** Maps an evaluation record (isEvaluation) and checks it; null for an evaluation that failed (ignored). */
export function mapEvaluation(r: DecodedLogRecord, bounds: SpanBounds): MappedEvaluation | null {
  const a = r.attributes;
  if (!absent(a.get('error.type'))) return null;
  const rawName = a.get('gen_ai.evaluation.name');
  if (typeof rawName !== 'string' || rawName.trim() === '')
    return { invalid: 'gen_ai.evaluation.name is missing (a non-empty string is required)' };
  const score = scoreOf(a.get('gen_ai.evaluation.score.value'));
  if (score !== null && typeof score === 'object') return score;
  const label = text(a.get('gen_ai.evaluation.score.label'));
  if (score === null && label === null)
    return { invalid: 'neither gen_ai.evaluation.score.value nor gen_ai.evaluation.score.label is set' };
  if (r.traceId.length !== 32 || !ID.test(r.traceId) || /^0+$/.test(r.traceId))
    return {
      invalid:
        'no trace id: emit the evaluation in the context of the evaluated span (gen_ai.response.id alone is not linked)',
    };
  if (r.spanId !== '' && (r.spanId.length !== 16 || !ID.test(r.spanId) || /^0+$/.test(r.spanId)))
    return { invalid: 'invalid span_id' };
  const timeNs = r.timeNs > 0n ? r.timeNs : r.observedNs;
  if (timeNs <= 0n) return { invalid: 'invalid time' };
  const timeS = Number(timeNs / 1_000_000_000n);
  const refused = timeRefused(timeS, bounds.retentionDays);
  if (refused !== null) return { invalid: refused };
  const responseId = text(a.get('gen_ai.response.id'));
  const explanation = text(a.get('gen_ai.evaluation.explanation'));
  const workspace = text(r.resource.get('workspace.id'));
  const values = [rawName, label, responseId, workspace];
  if (hasNul([...values, explanation])) return { invalid: NUL_REFUSED };
  if (values.some((v) => bytes(v) > bounds.maxValueBytes))
    return { invalid: `an attribute value longer than ${bounds.maxValueBytes} bytes` };
  if (bytes(explanation) > MAX_EXPLANATION_BYTES)
    return { invalid: `gen_ai.evaluation.explanation longer than ${MAX_EXPLANATION_BYTES} bytes` };
  return {
    invalid: null,
    workspace,
    fields: {
      key: evaluationKey(r),
      trace_id: r.traceId,
      span_id: r.spanId === '' ? null : r.spanId,
      response_id: responseId,
      name: rawName,
      score,
      label,
      passed: verdictOf(label),
      explanation,
      time_s: timeS,
    },
  };
}
