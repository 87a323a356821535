/**
 * What an OTLP answer says about the write (DESIGN §12): a request sent again (as exporters do
 * after a timeout, a 429 or a 503) is counted once, on every signal; a write that has begun is
 * answered after its commit, past the deadline if need be, with 200; a write withdrawn at the
 * deadline before it began is answered 504 with nothing stored; a write the store failed is
 * answered 503 with Retry-After, never a 500 (which exporters drop).
 */
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  QueryCancelledError,
  TraceStoreUnavailableError,
  type InsertOutcome,
  type SpanColumns,
  type TraceStore,
} from '../../src/store/trace-port.ts';
import { encodeExportRequest } from '../../src/otlp/traces/decode.ts';
import { encodeLogsRequest } from '../../src/otlp/logs/decode.ts';
import { encodeMetricsRequest } from '../../src/otlp/metrics/decode.ts';
import { attrs, otlpLogsBody, otlpMetricsBody, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { scalarStats } from '../helpers/scalar-stats.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const NOW = Math.floor(Date.now() / 1000);
const HARNESS = attrs({ 'service.name': 'harness', 'workspace.id': 'ws-a-team' });
const CLAUDE_CODE = attrs({ 'service.name': 'claude-code', 'workspace.id': 'ws-a-team' });

/** One skill invocation with a tool call inside it (the example is the first alone). */
function traces(at: number, traceHex: string) {
  return otlpTraceBody({
    resource: HARNESS,
    spans: [
      {
        traceId: traceHex,
        spanId: 'b7ad6b7169203331',
        name: 'invoke_skill',
        startTimeUnixNano: `${at}000000000`,
        endTimeUnixNano: `${at}500000000`,
        attributes: attrs({ 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'sk-1' }),
      },
      {
        traceId: traceHex,
        spanId: 'b7ad6b7169203332',
        parentSpanId: 'b7ad6b7169203331',
        name: 'execute_tool',
        startTimeUnixNano: `${at}100000000`,
        endTimeUnixNano: `${at}200000000`,
        attributes: attrs({
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'search',
          'gen_ai.usage.input_tokens': { intValue: '40' },
        }),
      },
    ],
  });
}

const claudeEvents = (at: number) =>
  otlpLogsBody({
    resource: CLAUDE_CODE,
    records: [
      {
        timeUnixNano: `${at}000000000`,
        body: { stringValue: 'claude_code.skill_activated' },
        attributes: attrs({ 'prompt.id': `p-${at}`, 'session.id': `s-${at}`, 'skill.name': 'summarize' }),
      },
      {
        timeUnixNano: `${at + 1}000000000`,
        body: { stringValue: 'claude_code.api_request' },
        attributes: attrs({
          'prompt.id': `p-${at}`,
          'session.id': `s-${at}`,
          model: 'claude-sonnet-4-5',
          input_tokens: '100',
          output_tokens: '20',
        }),
      },
    ],
  });

const linesAdded = (at: number, n: number, session: string) =>
  otlpMetricsBody({
    resource: CLAUDE_CODE,
    metrics: [
      {
        name: 'claude_code.lines_of_code.count',
        sum: {
          aggregationTemporality: 1,
          dataPoints: [
            {
              startTimeUnixNano: `${at - 60}000000000`,
              timeUnixNano: `${at}000000000`,
              asInt: String(n),
              attributes: attrs({ type: 'added', 'session.id': session }),
            },
          ],
        },
      },
    ],
  });

const ENCODERS: Record<string, (message: object) => Buffer> = {
  traces: encodeExportRequest,
  logs: encodeLogsRequest,
  metrics: encodeMetricsRequest,
};

async function post(t: TestApp, signal: string, body: object, protobuf = false) {
  const headers = {
    ...(await t.auth('u-admin')),
    'content-type': protobuf ? 'application/x-protobuf' : 'application/json',
  };
  const encode = ENCODERS[signal] as (message: object) => Buffer;
  const payload = protobuf ? zlib.gzipSync(encode(body)) : JSON.stringify(body);
  return t.app.inject({
    method: 'POST',
    url: `/v1/${signal}`,
    headers: protobuf ? { ...headers, 'content-encoding': 'gzip' } : headers,
    payload,
  });
}

describe('a request delivered again is counted once', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });
  const stats = (at: number) =>
    scalarStats(t, {
      skill: 'sk-1',
      start: at - 60,
      end: at + 60,
      measures: {
        invocations: 'skill_invocations',
        spans: 'spans',
        traces: 'traces',
        tools: 'tool_calls',
        tokens: 'tokens',
        lines: 'lines_added',
      },
    });

  it('the same traces request three times: one invocation, two spans (JSON and gzip protobuf alike)', async () => {
    const at = NOW - 600;
    const body = traces(at, '0af7651916cd43dd8448eb211c80319c');
    for (let i = 0; i < 3; i++) {
      const res = await post(t, 'traces', body, i === 2);
      expect(res.statusCode, res.body).toBe(200);
      // Nothing was refused: a span stored already is no error of the sender's.
      expect(res.body).not.toContain('partialSuccess');
    }
    expect(await stats(at)).toEqual({ invocations: 1, spans: 2, traces: 1, tools: 1, tokens: 40, lines: 0 });
  });

  it('the same Claude Code events and counter points, delivered twice, count once', async () => {
    const at = NOW - 1200;
    for (let i = 0; i < 2; i++) {
      expect((await post(t, 'logs', claudeEvents(at))).statusCode).toBe(200);
      expect((await post(t, 'metrics', linesAdded(at + 5, 7, `s-${at}`))).statusCode).toBe(200);
    }
    expect(await stats(at)).toEqual({ invocations: 1, spans: 2, traces: 1, tools: 0, tokens: 120, lines: 7 });
    // The same again in protobuf, with an attribute holding an empty value (protobuf reads it as '',
    // JSON's {} as null): one identity for both encodings.
    const empty = { key: 'x.empty', value: {} };
    const events = claudeEvents(at + 100);
    for (const r of events.resourceLogs[0]?.scopeLogs[0]?.logRecords ?? []) r.attributes.push(empty);
    const point = linesAdded(at + 50, 5, `s-${at}`);
    point.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]?.sum.dataPoints[0]?.attributes.push(empty);
    for (const protobuf of [false, true]) {
      expect((await post(t, 'logs', events, protobuf)).statusCode).toBe(200);
      expect((await post(t, 'metrics', point, protobuf)).statusCode).toBe(200);
    }
    expect(await stats(at + 100)).toMatchObject({ invocations: 1, spans: 2, tokens: 120 });
    expect((await stats(at)).lines).toBe(12);
    // Another point of the same series (a later interval) is a point of its own.
    expect((await post(t, 'metrics', linesAdded(at + 6, 3, `s-${at}`))).statusCode).toBe(200);
    expect((await stats(at)).lines).toBe(15);
  });
});

/**
 * The real store, with every span write held until the request's deadline has passed: before it
 * begins (honouring its signal as the engines do: withdrawn, nothing stored), or after it commits.
 */
function slowWrites(when: 'before' | 'after') {
  const deadlinePassed = (signal: AbortSignal | undefined) =>
    new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
  return (real: TraceStore): TraceStore =>
    Object.assign(Object.create(real) as TraceStore, {
      async insertColumns(spans: SpanColumns, signal?: AbortSignal): Promise<InsertOutcome> {
        if (when === 'before') {
          await deadlinePassed(signal);
          throw new QueryCancelledError();
        }
        const outcome = await real.insertColumns(spans);
        await deadlinePassed(signal);
        return outcome;
      },
    });
}

describe('the answer tells the truth about the write', () => {
  const env = { REQUEST_TIMEOUT_MS: '3000' };

  it('a write that commits after the deadline is answered 200, after the commit', async () => {
    const t = await startTestApp({ env, wrapTraces: slowWrites('after') });
    try {
      // The decode threads start on the first request: warmed up, the write begins well before the deadline.
      expect((await post(t, 'metrics', linesAdded(NOW - 300, 1, 's-1'))).statusCode).toBe(200);
      const started = Date.now();
      const res = await post(t, 'traces', traces(NOW - 300, '1af7651916cd43dd8448eb211c80319c'));
      expect(res.statusCode, res.body).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
      expect(await t.traces.countSpans()).toBe(2);
    } finally {
      await t.close();
    }
  });

  it('a write still waiting at the deadline is withdrawn and answered 504, nothing stored', async () => {
    const t = await startTestApp({ env, wrapTraces: slowWrites('before') });
    try {
      const res = await post(t, 'traces', traces(NOW - 300, '2af7651916cd43dd8448eb211c80319c'));
      expect(res.statusCode, res.body).toBe(504);
      expect(res.json()).toMatchObject({ code: 'request_timeout' });
      expect(await t.traces.countSpans()).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('a write the store fails is answered 503 with Retry-After, which exporters retry', async () => {
    const failing = (real: TraceStore): TraceStore =>
      Object.assign(Object.create(real) as TraceStore, {
        insertColumns: () => Promise.reject(new TraceStoreUnavailableError()),
        insertMetricPoints: () => Promise.reject(new Error('disk full')),
      });
    const t = await startTestApp({ wrapTraces: failing });
    try {
      const res = await post(t, 'traces', traces(NOW - 300, '3af7651916cd43dd8448eb211c80319c'));
      expect(res.statusCode, res.body).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ code: 'traces_unavailable' });
      const points = await post(t, 'metrics', linesAdded(NOW - 300, 1, 's-1'));
      expect(points.statusCode).toBe(503);
      expect(points.body).not.toContain('disk full');
    } finally {
      await t.close();
    }
  });
});

describe('what retention would delete is refused at the door', () => {
  it('a span or point older than TRACE_RETENTION_DAYS is rejected with the reason; 0 keeps every date', async () => {
    const t = await startTestApp({ env: { TRACE_RETENTION_DAYS: '30' } });
    try {
      const old = NOW - 31 * 86400;
      const res = await post(t, 'traces', traces(old, '4af7651916cd43dd8448eb211c80319c'));
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        partialSuccess: {
          rejectedSpans: 2,
          errorMessage:
            '2 span(s): a start time more than 30 days ago: older than the retention period (TRACE_RETENTION_DAYS)',
        },
      });
      const points = await post(t, 'metrics', linesAdded(old, 1, 's-old'));
      expect(points.json()).toMatchObject({ partialSuccess: { rejectedDataPoints: 1 } });
      // A day inside the period is stored.
      expect((await post(t, 'traces', traces(NOW - 29 * 86400, '5af7651916cd43dd8448eb211c80319c'))).body).toBe('{}');
      expect(await t.traces.countSpans()).toBe(2);
    } finally {
      await t.close();
    }
    const keepAll = await startTestApp({ env: { TRACE_RETENTION_DAYS: '0' } });
    try {
      expect((await post(keepAll, 'traces', traces(NOW - 400 * 86400, '6af7651916cd43dd8448eb211c80319c'))).body).toBe(
        '{}',
      );
    } finally {
      await keepAll.close();
    }
  });
});
