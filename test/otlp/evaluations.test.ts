/**
 * Evaluations end to end, on both engines: an application traced with the OpenTelemetry JS trace
 * SDK (skill invocations of sk-1 by agent ag-1, each with a model call, and traces of no skill) and
 * an evaluator that emits the GenAI conventions' `gen_ai.evaluation.result` events with the JS logs
 * SDK, each in the context of the model call it evaluates, both over OTLP/HTTP to a listening
 * gateway. evaluation_score and evaluation_pass_rate, overall, by evaluation name and by day, in
 * operation 1, the agent endpoint and GraphQL, equal a plain computation over what was sent; the
 * same export sent again counts once; bad events are refused in the partial success with their
 * reason and change nothing. Attribute and event names come from `@opentelemetry/semantic-conventions`.
 */
import { DiagLogLevel, ROOT_CONTEXT, diag, trace, type Span, type SpanContext } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchLogRecordProcessor,
  LoggerProvider,
  type LogRecordExporter,
  type ReadableLogRecord,
} from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_EVALUATION_EXPLANATION,
  ATTR_GEN_AI_EVALUATION_NAME,
  ATTR_GEN_AI_EVALUATION_SCORE_LABEL,
  ATTR_GEN_AI_EVALUATION_SCORE_VALUE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_ID,
  EVENT_GEN_AI_EVALUATION_RESULT,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attrs, otlpLogsBody } from '../fixtures/otlp-body.ts';
import { gql } from '../graphql/helpers.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** The package marks the GenAI names deprecated: moved, unchanged, to open-telemetry/semantic-conventions-genai. */
// eslint-disable-next-line @typescript-eslint/no-deprecated
const EVALUATION_RESULT = EVENT_GEN_AI_EVALUATION_RESULT;
const DAY = 86_400;
/** 2026-01-12, a Monday: the traces lie on its first three days, the evaluations on four. */
const START = Date.UTC(2026, 0, 12) / 1000;
const NAMES = ['Relevance', 'Groundedness'];
const LABELS = ['pass', 'fail', 'PASS', 'needs review', undefined];

interface Sent {
  name: string;
  score: number | undefined;
  label: string | undefined;
  timeS: number;
  /** Whether its trace is one of sk-1's (and ag-1's). */
  counted: boolean;
}

/** The plain computation: the mean score, and passes over pass-or-fail labels (case aside). */
function expected(sent: readonly Sent[]): { score: number | null; passRate: number | null } {
  const scores = sent.flatMap((e) => (e.score === undefined ? [] : [e.score]));
  const verdicts = sent.map((e) => e.label?.toLowerCase()).filter((l) => l === 'pass' || l === 'fail');
  return {
    score: scores.length === 0 ? null : scores.reduce((a, b) => a + b, 0) / scores.length,
    passRate: verdicts.length === 0 ? null : verdicts.filter((l) => l === 'pass').length / verdicts.length,
  };
}

/** Forwards to the OTLP exporter and keeps what it exported, to export it again. */
class Recording implements LogRecordExporter {
  readonly records: ReadableLogRecord[] = [];
  private readonly inner: LogRecordExporter;
  constructor(inner: LogRecordExporter) {
    this.inner = inner;
  }
  export(records: ReadableLogRecord[], done: Parameters<LogRecordExporter['export']>[1]): void {
    this.records.push(...records);
    this.inner.export(records, done);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/** Exports `records` with `exporter`; the ExportResultCode (0: success, a partial success included). */
const exportWith = (exporter: LogRecordExporter, records: ReadableLogRecord[]) =>
  new Promise<number>((resolve) => {
    exporter.export(records, (r) => resolve(r.code));
  });

function suite(engine: string, env: () => Record<string, string>) {
  describe(`evaluations sent with the OpenTelemetry JS SDK: ${engine}`, () => {
    let t: TestApp;
    let url: string;
    let headers: Record<string, string>;
    const sent: Sent[] = [];
    let recording: Recording;
    const resource = resourceFromAttributes({ 'service.name': 'support-app', 'workspace.id': 'ws-a-team' });

    beforeAll(async () => {
      t = await startTestApp({ env: env() });
      url = await t.app.listen({ host: '127.0.0.1', port: 0 });
      headers = { Authorization: `Bearer ${await t.token('u-admin')}` };
      const tracing = new BasicTracerProvider({
        resource,
        spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${url}/v1/traces`, headers }))],
      });
      const tracer = tracing.getTracer('support-app');
      recording = new Recording(new OTLPLogExporter({ url: `${url}/v1/logs`, headers }));
      const logs = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: recording })] });
      const evaluator = logs.getLogger('evaluator');
      for (let i = 0; i < 15; i++) {
        // Every fifth trace is an agent's work outside the skill: its evaluations count for neither.
        const counted = i % 5 !== 4;
        const at = (START + (i % 3) * DAY + 600 * i) * 1000;
        const root = tracer.startSpan(
          counted ? 'invoke_skill' : 'invoke_agent',
          {
            startTime: at,
            attributes: counted
              ? { [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_skill', 'skill.id': 'sk-1', [ATTR_GEN_AI_AGENT_ID]: 'ag-1' }
              : { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT },
          },
          ROOT_CONTEXT,
        );
        const chat: Span = tracer.startSpan(
          'chat gpt-4o',
          {
            startTime: at + 100,
            attributes: {
              [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
              [ATTR_GEN_AI_REQUEST_MODEL]: 'gpt-4o',
              [ATTR_GEN_AI_RESPONSE_ID]: `chatcmpl-${i}`,
            },
          },
          trace.setSpan(ROOT_CONTEXT, root),
        );
        chat.end(at + 900);
        root.end(at + 1000);
        for (let n = 0; n < 1 + (i % 3); n++) {
          const e: Sent = {
            name: NAMES[(i + n) % NAMES.length] as string,
            score: (i + n) % 4 === 3 ? undefined : ((i * 7 + n * 3) % 11) / 2,
            label: LABELS[(i + 2 * n) % LABELS.length],
            // One in four a day later: its own day, not its trace's.
            timeS: Math.floor(at / 1000) + 60 + (n === 1 && i % 4 === 0 ? DAY : 0),
            counted,
          };
          if (e.score === undefined && e.label === undefined) e.label = 'fail';
          sent.push(e);
          evaluator.emit({
            eventName: EVALUATION_RESULT,
            timestamp: e.timeS * 1000,
            context: trace.setSpan(ROOT_CONTEXT, chat),
            attributes: {
              [ATTR_GEN_AI_EVALUATION_NAME]: e.name,
              [ATTR_GEN_AI_RESPONSE_ID]: `chatcmpl-${i}`,
              [ATTR_GEN_AI_EVALUATION_EXPLANATION]: `judged ${i}/${n}`,
              ...(e.score !== undefined ? { [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: e.score } : {}),
              ...(e.label !== undefined ? { [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: e.label } : {}),
            },
          });
        }
      }
      await tracing.forceFlush();
      await logs.forceFlush();
      await Promise.all([tracing.shutdown(), logs.shutdown()]);
    });
    afterAll(async () => {
      await t.close();
    });

    const counted = () => sent.filter((e) => e.counted);
    const stats = async (path: string, body: Record<string, unknown>) => {
      const res = await t.app.inject({ method: 'POST', url: path, headers: await t.auth('u-admin'), payload: body });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    const range = { start_time_unix_seconds: START, end_time_unix_seconds: START + 5 * DAY };
    const queries = [
      { name: 'score', measure: 'evaluation_score' },
      { name: 'pass', measure: 'evaluation_pass_rate' },
    ];
    const closeTo = (got: number | null, want: number | null) =>
      want === null ? expect(got).toBeNull() : expect(got).toBeCloseTo(want, 12);
    const scalar = async (path: string) => {
      const data = await stats(path, { ...range, request_type: 'scalar', queries });
      return { score: data.results[0].value as number | null, passRate: data.results[1].value as number | null };
    };

    it('sends what it should: spans and evaluations, every evaluation linked to a model call', () => {
      expect(recording.records.length).toBe(sent.length);
      for (const r of recording.records) expect(r.spanContext?.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(counted().length).toBeGreaterThan(15);
      expect(sent.length - counted().length).toBeGreaterThan(2);
    });

    it('answers the score and pass rate of the skill and of the agent as a plain computation', async () => {
      const want = expected(counted());
      expect(want.score).not.toBeNull();
      for (const path of ['/skill/v1/skills/sk-1/traces/stats/query', '/agent/v1/agents/ag-1/traces/stats/query']) {
        const got = await scalar(path);
        closeTo(got.score, want.score);
        closeTo(got.passRate, want.passRate);
      }
      const res = await gql(
        t,
        `{ skill(id: "sk-1") { traceStats(input: { startTimeUnixSeconds: ${START}, endTimeUnixSeconds: ${START + 5 * DAY}, requestType: SCALAR, queries: [{ name: "score", measure: EVALUATION_SCORE }, { name: "pass", measure: EVALUATION_PASS_RATE }] }) { data { ... on ScalarStats { results { value unit } } } } } }`,
      );
      expect(res.errors).toBeUndefined();
      const [score, pass] = res.data.skill.traceStats.data.results;
      closeTo(score.value, want.score);
      closeTo(pass.value, want.passRate);
      expect([score.unit, pass.unit]).toEqual(['score', 'ratio']);
    });

    it('answers them by evaluation name (a table) and by day (a time series)', async () => {
      const table = await stats('/skill/v1/skills/sk-1/traces/stats/query', {
        ...range,
        request_type: 'table',
        queries: queries.map((q) => ({ ...q, group_by: ['evaluation'] })),
      });
      expect(table.rows.map((r: { groups: { evaluation: string } }) => r.groups.evaluation).sort()).toEqual(
        [...NAMES].sort(),
      );
      for (const row of table.rows) {
        const want = expected(counted().filter((e) => e.name === row.groups.evaluation));
        closeTo(row.values.score, want.score);
        closeTo(row.values.pass, want.passRate);
      }
      const series = await stats('/skill/v1/skills/sk-1/traces/stats/query', {
        ...range,
        request_type: 'time_series',
        bucket: 'day',
        queries,
      });
      const [scores, passes] = series.series;
      expect(scores.points).toHaveLength(5);
      for (const [i, point] of scores.points.entries()) {
        const day = START + i * DAY;
        const want = expected(counted().filter((e) => e.timeS >= day && e.timeS < day + DAY));
        closeTo(point.value, want.score);
        closeTo(passes.points[i].value, want.passRate);
      }
      // The fourth day holds only evaluations sent a day after their traces.
      expect(scores.points[3].value).not.toBeNull();
    });

    it('refuses the evaluation dimension with a measure of spans, over REST and GraphQL', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/skill/v1/skills/sk-1/traces/stats/query',
        headers: await t.auth('u-admin'),
        payload: {
          ...range,
          request_type: 'table',
          queries: [{ name: 'n', measure: 'spans', group_by: ['evaluation'] }],
        },
      });
      expect(expectProblem(res, 422, 'validation_failed').errors).toEqual([
        {
          field: '/queries/0/group_by',
          detail:
            'the dimension evaluation groups and filters only the measures evaluation_score and evaluation_pass_rate, not spans',
        },
      ]);
      const graphql = await gql(
        t,
        `{ agent(id: "ag-1") { traceStats(input: { startTimeUnixSeconds: ${START}, endTimeUnixSeconds: ${START + DAY}, requestType: TABLE, queries: [{ name: "n", measure: TRACES, filters: [{ key: EVALUATION, op: EXISTS }] }] }) { meta { warnings } } } }`,
      );
      expect(graphql.errors?.[0]?.extensions.code).toBe('validation_failed');
    });

    it('counts the same export sent again once', async () => {
      const before = await scalar('/skill/v1/skills/sk-1/traces/stats/query');
      // Part of it again (a mean is the same over every evaluation twice), in JSON; then all of it.
      const part = recording.records.slice(0, 5);
      expect(await exportWith(new JsonLogExporter({ url: `${url}/v1/logs`, headers }), part)).toBe(0);
      expect(await exportWith(new OTLPLogExporter({ url: `${url}/v1/logs`, headers }), recording.records)).toBe(0);
      expect(await scalar('/skill/v1/skills/sk-1/traces/stats/query')).toEqual(before);
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      const duplicates = /gateway_otlp_records_total\{signal="logs",outcome="duplicate"\} (\d+)/.exec(metrics);
      expect(Number(duplicates?.[1])).toBe(part.length + sent.length);
    });

    it('refuses a score that is not a number and a missing name in the partial success, changing nothing', async () => {
      const before = await scalar('/skill/v1/skills/sk-1/traces/stats/query');
      const warnings: string[] = [];
      diag.setLogger(
        {
          error: () => undefined,
          warn: (...args: unknown[]) => warnings.push(args.map(String).join(' ')),
          info: () => undefined,
          debug: () => undefined,
          verbose: () => undefined,
        },
        DiagLogLevel.WARN,
      );
      try {
        const bad = new Recording(new OTLPLogExporter({ url: `${url}/v1/logs`, headers }));
        const logs = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: bad })] });
        const evaluator = logs.getLogger('evaluator');
        const context = trace.setSpan(
          ROOT_CONTEXT,
          trace.wrapSpanContext(recording.records[0]?.spanContext as SpanContext),
        );
        const attributes = { [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: 'pass' };
        evaluator.emit({
          eventName: EVALUATION_RESULT,
          timestamp: (START + 60) * 1000,
          context,
          attributes: {
            ...attributes,
            [ATTR_GEN_AI_EVALUATION_NAME]: 'Relevance',
            [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: 'high',
          },
        });
        evaluator.emit({
          eventName: EVALUATION_RESULT,
          timestamp: (START + 60) * 1000,
          context,
          attributes: { ...attributes, [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: 0 },
        });
        await logs.forceFlush();
        await logs.shutdown();
        expect(bad.records).toHaveLength(2);
      } finally {
        diag.disable();
      }
      // What the SDK reports of the answer: the OTLP partial success, with each reason.
      const partial = warnings.find((w) => w.startsWith('Received Partial Success response:')) ?? '';
      expect(JSON.parse(partial.slice(partial.indexOf('{')))).toEqual({
        rejectedLogRecords: 2,
        errorMessage:
          '1 evaluation(s): gen_ai.evaluation.score.value must be a number, got string; ' +
          '1 evaluation(s): gen_ai.evaluation.name is missing (a non-empty string is required)',
      });
      expect(await scalar('/skill/v1/skills/sk-1/traces/stats/query')).toEqual(before);
    });

    it('stores the harness events and the evaluations of one logs request, each under its rule', async () => {
      const stored = async () => {
        const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
        return Number(/gateway_otlp_records_total\{signal="logs",outcome="stored"\} (\d+)/.exec(metrics)?.[1]);
      };
      const storedBefore = await stored();
      const evaluated = recording.records[0]?.spanContext as SpanContext;
      const evaluation = (name: string | undefined, score: number) => ({
        eventName: EVALUATION_RESULT,
        timeUnixNano: `${START + 120}000000000`,
        traceId: evaluated.traceId,
        spanId: evaluated.spanId,
        attributes: attrs({
          ...(name === undefined ? {} : { [ATTR_GEN_AI_EVALUATION_NAME]: name }),
          [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: { doubleValue: score },
        }),
      });
      const body = otlpLogsBody({
        resource: attrs({ 'service.name': 'claude-code', 'workspace.id': 'ws-a-team' }),
        records: [
          {
            timeUnixNano: `${START + 60}000000000`,
            body: { stringValue: 'claude_code.api_request' },
            attributes: attrs({ 'prompt.id': 'p-mixed', 'session.id': 's-mixed', input_tokens: '5' }),
          },
          evaluation('Relevance', 4.5),
          evaluation(undefined, 1),
        ],
      });
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        partialSuccess: {
          rejectedLogRecords: 1,
          errorMessage: '1 evaluation(s): gen_ai.evaluation.name is missing (a non-empty string is required)',
        },
      });
      expect(await stored()).toBe(storedBefore + 2);
      const want = expected([
        ...counted(),
        { name: 'Relevance', score: 4.5, label: undefined, timeS: START + 120, counted: true },
      ]);
      closeTo((await scalar('/skill/v1/skills/sk-1/traces/stats/query')).score, want.score);
    });
  });
}

suite('embedded', () => ({}));

const server = await fileDatabase('gw_evaluations');
if (server !== null) suite('postgres', () => server);
