/**
 * The `gen_ai.evaluation.result` event as the decode threads map it (otlp/logs/evaluations.ts),
 * through both decoders of a logs body (JSON and protobuf): what is stored of a good event, each
 * refusal with its reason (DESIGN §12 bounds included), the verdict of each label, and the
 * identity a resent record keeps in either encoding. Names come from `@opentelemetry/semantic-conventions`.
 */
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_EVALUATION_EXPLANATION,
  ATTR_GEN_AI_EVALUATION_NAME,
  ATTR_GEN_AI_EVALUATION_SCORE_LABEL,
  ATTR_GEN_AI_EVALUATION_SCORE_VALUE,
  ATTR_GEN_AI_RESPONSE_ID,
  EVENT_GEN_AI_EVALUATION_RESULT,
} from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import { decodeLogsJson, encodeLogsRequest, type DecodedLogRecord } from '../../src/otlp/logs/decode.ts';
import {
  MAX_EXPLANATION_BYTES,
  isEvaluation,
  mapEvaluation,
  verdictOf,
  type MappedEvaluation,
} from '../../src/otlp/logs/evaluations.ts';
import { decodeLogsRequestProto } from '../../src/otlp/logs/proto-reader.ts';
import { attr, otlpLogsBody, type AnyValue, type KeyValue } from '../fixtures/otlp-body.ts';

/** The package marks the GenAI names deprecated: moved, unchanged, to open-telemetry/semantic-conventions-genai. */
// eslint-disable-next-line @typescript-eslint/no-deprecated
const EVALUATION_RESULT = EVENT_GEN_AI_EVALUATION_RESULT;
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';
const AT = 1_790_000_000;
const BOUNDS = { maxValueBytes: 256, spanMaxTokens: 1e8, spanMaxCostUsd: 1e4, spanMaxDurationS: 30 * 86400 };

interface Shape {
  attributes?: Record<string, string | AnyValue | undefined>;
  traceId?: string;
  spanId?: string;
  time?: number;
  observed?: number;
  eventName?: string;
}

const GOOD: Record<string, string | AnyValue> = {
  [ATTR_GEN_AI_EVALUATION_NAME]: 'Relevance',
  [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: { doubleValue: 0.75 },
  [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: 'pass',
  [ATTR_GEN_AI_EVALUATION_EXPLANATION]: 'answers the question',
  [ATTR_GEN_AI_RESPONSE_ID]: 'chatcmpl-1',
};

function record(s: Shape, ids: (hex: string) => unknown) {
  const attributes: KeyValue[] = Object.entries({ ...GOOD, ...s.attributes }).flatMap(([k, v]) =>
    v === undefined ? [] : [attr(k, v)],
  );
  return {
    eventName: s.eventName ?? EVALUATION_RESULT,
    timeUnixNano: `${s.time ?? AT}000000000`,
    observedTimeUnixNano: `${s.observed ?? AT + 1}000000000`,
    attributes,
    ...(s.traceId !== '' ? { traceId: ids(s.traceId ?? TRACE) } : {}),
    ...(s.spanId !== '' ? { spanId: ids(s.spanId ?? SPAN) } : {}),
  };
}

/** The record of `s` as both decoders read it: JSON (hex ids) and protobuf (bytes). */
function decoded(s: Shape): [DecodedLogRecord, DecodedLogRecord] {
  const resource = [attr('service.name', 'evaluator')];
  const json = otlpLogsBody({ resource, records: [record(s, (hex) => hex)] });
  const proto = otlpLogsBody({ resource, records: [record(s, (hex) => Buffer.from(hex, 'hex'))] });
  const [a] = decodeLogsJson(Buffer.from(JSON.stringify(json)), 10);
  const [b] = decodeLogsRequestProto(encodeLogsRequest(proto), 10);
  return [a as DecodedLogRecord, b as DecodedLogRecord];
}

/** Maps `s` through both decoders; both must agree. */
function mapped(s: Shape): MappedEvaluation | null {
  const [json, proto] = decoded(s);
  expect(isEvaluation(json) && isEvaluation(proto)).toBe(true);
  const out = mapEvaluation(json, BOUNDS);
  expect(mapEvaluation(proto, BOUNDS)).toEqual(out);
  return out;
}

const reason = (s: Shape) => {
  const m = mapped(s);
  return m === null ? null : m.invalid;
};

describe('gen_ai.evaluation.result events', () => {
  it('stores every field of a good event, the trace and span it was emitted in, and its time', () => {
    const m = mapped({});
    expect(m).toEqual({
      invalid: null,
      workspace: null,
      fields: {
        key: expect.stringMatching(/^[0-9a-f]{32}$/),
        trace_id: TRACE,
        span_id: SPAN,
        response_id: 'chatcmpl-1',
        name: 'Relevance',
        score: 0.75,
        label: 'pass',
        passed: true,
        explanation: 'answers the question',
        time_s: AT,
      },
    });
  });

  it('takes an integer score, a label alone, a score alone, no span id, and the observed time when the time is unset', () => {
    const fields = (s: Shape) => {
      const m = mapped(s);
      if (m === null || m.invalid !== null) throw new Error(`refused: ${JSON.stringify(m)}`);
      return m.fields;
    };
    expect(fields({ attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: { intValue: '4' } } }).score).toBe(4);
    expect(fields({ attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: undefined } })).toMatchObject({
      score: null,
      passed: true,
    });
    expect(fields({ attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: undefined } })).toMatchObject({
      score: 0.75,
      label: null,
      passed: null,
    });
    expect(fields({ spanId: '' }).span_id).toBeNull();
    expect(fields({ time: 0, observed: AT + 5 }).time_s).toBe(AT + 5);
  });

  it('reads the older event.name attribute as the event name', () => {
    const [json] = decoded({ eventName: '', attributes: { 'event.name': EVALUATION_RESULT } });
    expect(isEvaluation(json)).toBe(true);
    const [other] = decoded({ eventName: 'gen_ai.client.inference.operation.details' });
    expect(isEvaluation(other)).toBe(false);
  });

  it.each<[string, Shape, string]>([
    [
      'a score given as text',
      { attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: '0.9' } },
      'gen_ai.evaluation.score.value must be a number, got string',
    ],
    [
      'a score given as a boolean',
      { attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: { boolValue: true } } },
      'gen_ai.evaluation.score.value must be a number, got boolean',
    ],
    [
      'a score past 1e9',
      { attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: { doubleValue: -2e9 } } },
      'gen_ai.evaluation.score.value out of range (at most 1e+9 in magnitude)',
    ],
    [
      'no name',
      { attributes: { [ATTR_GEN_AI_EVALUATION_NAME]: undefined } },
      'gen_ai.evaluation.name is missing (a non-empty string is required)',
    ],
    [
      'a blank name',
      { attributes: { [ATTR_GEN_AI_EVALUATION_NAME]: '  ' } },
      'gen_ai.evaluation.name is missing (a non-empty string is required)',
    ],
    [
      'neither score nor label',
      {
        attributes: {
          [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: undefined,
          [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: undefined,
        },
      },
      'neither gen_ai.evaluation.score.value nor gen_ai.evaluation.score.label is set',
    ],
    [
      'no trace id (a response id alone)',
      { traceId: '' },
      'no trace id: emit the evaluation in the context of the evaluated span (gen_ai.response.id alone is not linked)',
    ],
    ['an all-zero trace id', { traceId: '0'.repeat(32) }, 'no trace id'],
    ['a short span id', { spanId: 'abcd' }, 'invalid span_id'],
    [
      'a name over 256 bytes',
      { attributes: { [ATTR_GEN_AI_EVALUATION_NAME]: 'é'.repeat(129) } },
      'longer than 256 bytes',
    ],
    [
      'a label over 256 bytes',
      { attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: 'x'.repeat(257) } },
      'an attribute value longer than 256 bytes',
    ],
    [
      `an explanation over ${MAX_EXPLANATION_BYTES} bytes`,
      { attributes: { [ATTR_GEN_AI_EVALUATION_EXPLANATION]: '€'.repeat(5462) } },
      `gen_ai.evaluation.explanation longer than ${MAX_EXPLANATION_BYTES} bytes`,
    ],
    ['a NUL in a label', { attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: 'pa\u0000ss' } }, 'U+0000'],
    ['a time two days ahead', { time: Math.floor(Date.now() / 1000) + 2 * 86400 }, 'more than a day ahead'],
    ['no time at all', { time: 0, observed: 0 }, 'invalid time'],
  ])('refuses %s, saying why', (_name, shape, why) => {
    expect(reason(shape)).toContain(why);
  });

  it(`keeps an explanation of ${MAX_EXPLANATION_BYTES} bytes`, () => {
    expect(reason({ attributes: { [ATTR_GEN_AI_EVALUATION_EXPLANATION]: '€'.repeat(5461) + 'x' } })).toBeNull();
  });

  it('ignores an evaluation that failed (error.type): it has no result', () => {
    expect(mapped({ attributes: { [ATTR_ERROR_TYPE]: 'timeout' } })).toBeNull();
  });

  it('gives a verdict to the pass and fail words only, whatever their case', () => {
    const words = ['pass', ' PASSED ', 'Correct', 'relevant', 'true', 'yes', 'fail', 'failed', 'incorrect'];
    const more = ['not_relevant', 'irrelevant', 'false', 'no', 'maybe', '4', '', null];
    expect([...words, ...more].map(verdictOf)).toEqual([
      ...[true, true, true, true, true, true, false, false, false],
      ...[false, false, false, false, null, null, null, null],
    ]);
  });

  it('keeps one identity for a record resent in either encoding, another for another record', () => {
    const key = (s: Shape) => {
      const m = mapped(s);
      return m !== null && m.invalid === null ? m.fields.key : null;
    };
    expect(key({})).toBe(key({}));
    expect(key({ attributes: { [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: { doubleValue: 0.5 } } })).not.toBe(key({}));
    expect(key({ spanId: '00f067aa0ba902b7' })).not.toBe(key({}));
    expect(key({ time: AT + 1 })).not.toBe(key({}));
  });
});
