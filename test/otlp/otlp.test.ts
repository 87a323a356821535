/**
 * The OTLP/HTTP receiver through a listening server: real OpenTelemetry SDK exporters (protobuf
 * and JSON), gzip, partial success, malformed payloads, and ingestion permissions.
 */
import zlib from 'node:zlib';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attrs, otlpTraceBody, type KeyValue } from '../fixtures/otlp-body.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { expectProblem } from '../helpers/problem.ts';

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await startTestApp();
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await t.close();
});

async function stats(skill: string, user = 'u-admin') {
  const res = await t.app.inject({
    method: 'POST',
    url: `/skill/v1/skills/${skill}/traces/stats/query`,
    headers: await t.auth(user),
    payload: {
      start_time_unix_seconds: Math.floor(Date.now() / 1000) - 86400,
      end_time_unix_seconds: Math.floor(Date.now() / 1000) + 86400,
      request_type: 'scalar',
      queries: [
        { name: 'spans', measure: 'spans' },
        { name: 'tools', measure: 'tool_calls' },
        { name: 'tokens', measure: 'tokens' },
        { name: 'errors', measure: 'error_rate' },
      ],
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return Object.fromEntries(
    res.json().data.results.map((r: { query_name: string; value: number }) => [r.query_name, r.value]),
  );
}

async function sendWith(exporter: SpanExporter, skillAttr: Record<string, string>) {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'test-harness', 'workspace.id': 'ws-a-team' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('otlp-test');
  const root = tracer.startSpan('invoke_skill', {
    attributes: {
      'gen_ai.operation.name': 'invoke_skill',
      ...skillAttr,
      'skill.version': 2,
      'user.id': 'u-admin',
      'session.id': 'sess-1',
    },
  });
  root.setStatus({ code: SpanStatusCode.ERROR });
  const { trace, context } = await import('@opentelemetry/api');
  const ctx = trace.setSpan(context.active(), root);
  const chat = tracer.startSpan(
    'chat',
    {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.output_tokens': 20,
      },
    },
    ctx,
  );
  chat.end();
  const tool = tracer.startSpan(
    'tools/call',
    {
      attributes: { 'mcp.method.name': 'tools/call', 'mcp.server.name': 'github', 'gen_ai.tool.name': 'create_issue' },
    },
    ctx,
  );
  tool.end();
  root.end();
  await provider.forceFlush();
  await provider.shutdown();
}

describe('POST /v1/traces', () => {
  it('stores spans sent by the OpenTelemetry protobuf exporter, before answering', async () => {
    const headers = await t.auth('u-admin');
    await sendWith(new ProtoExporter({ url: `${url}/v1/traces`, headers }), { 'skill.id': 'sk-1' });
    expect(await stats('sk-1')).toEqual({ spans: 3, tools: 1, tokens: 120, errors: 1 });
  });

  it('stores spans sent by the OpenTelemetry JSON exporter, resolving skill names', async () => {
    const headers = await t.auth('u-admin');
    await sendWith(new JsonExporter({ url: `${url}/v1/traces`, headers }), { 'skill.name': 'summarize' });
    expect(await stats('sk-1')).toEqual({ spans: 6, tools: 2, tokens: 240, errors: 1 });
  });

  const body = (spans: object[], resource: KeyValue[] = []) => otlpTraceBody({ resource, spans });
  const span = (id: string, extra: object = {}) => ({
    traceId: id.padStart(32, '1'),
    spanId: id.padStart(16, '2'),
    name: 'x',
    startTimeUnixNano: '1790000000000000000',
    endTimeUnixNano: '1790000000500000000',
    ...extra,
  });

  /** POSTs OTLP/JSON to /v1/traces as u-admin; the answer must be 200, its partial success is returned. */
  const partialSuccess = async (payload: string | Buffer, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}/v1/traces`, {
      method: 'POST',
      body: payload,
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json', ...headers },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { partialSuccess: { rejectedSpans: number; errorMessage: string } }).partialSuccess;
  };

  it('accepts gzip and answers partial success for invalid spans', async () => {
    const before = await t.traces.countSpans();
    const tokens = (n: string) => ({ attributes: [{ key: 'gen_ai.usage.input_tokens', value: { intValue: n } }] });
    const hugeVersion = {
      attributes: [
        { key: 'skill.id', value: { stringValue: 'sk-1' } },
        { key: 'skill.version', value: { intValue: String(2 ** 40) } },
      ],
    };
    const payload = zlib.gzipSync(
      JSON.stringify(
        body([
          span('a'),
          span('b', { traceId: 'nothex' }),
          span('c', { endTimeUnixNano: '1' }),
          span('d', tokens('-5')),
          span('e', tokens('18446744073709551615')),
          span('f', hugeVersion),
        ]),
      ),
    );
    const answer = await partialSuccess(payload, { 'content-encoding': 'gzip' });
    expect(answer.rejectedSpans).toBe(4);
    expect(answer.errorMessage).toContain('invalid trace_id');
    expect(answer.errorMessage).toContain('2 span(s): token counts out of range');
    // The span with a version no store can hold is kept, without a version.
    expect(await t.traces.countSpans()).toBe(before + 2);
  });

  it('refuses a NUL in any text and times beyond fixed64 as invalid spans, keeping the rest', async () => {
    const before = await t.traces.countSpans();
    const attr = (key: string, v: string) => ({ attributes: [{ key, value: { stringValue: v } }] });
    const answer = await partialSuccess(
      JSON.stringify(
        body([
          span('a1'),
          span('a2', attr('gen_ai.tool.name', 'a\u0000b')),
          span('a3', attr('session.id', '\u0000')),
          span('a4', { name: 'x\u0000' }),
          span('a5', {
            startTimeUnixNano: '99999999999999999999999999999',
            endTimeUnixNano: '99999999999999999999999999999',
          }),
          span('a6', { startTimeUnixNano: 1e300, endTimeUnixNano: 1e300 }),
          span('a7', { endTimeUnixNano: '0x7fffffffffffffff' }),
          span('a8', { endTimeUnixNano: '18446744073709551616' }),
          span('a9', { startTimeUnixNano: 1790000000000000000, endTimeUnixNano: '1790000000500000000' }),
        ]),
      ),
    );
    expect(answer.rejectedSpans).toBe(7);
    expect(answer.errorMessage).toContain('3 span(s): a text value contains U+0000 (NUL)');
    expect(answer.errorMessage).toContain('4 span(s): invalid start or end time');
    expect(await t.traces.countSpans()).toBe(before + 2);
  });

  it('answers 400 with an OTLP Status body for malformed payloads, storing nothing', async () => {
    const before = await t.traces.countSpans();
    const post = async (payload: Buffer | string, type: string, extra: Record<string, string> = {}) =>
      fetch(`${url}/v1/traces`, {
        method: 'POST',
        body: payload,
        headers: { ...(await t.auth('u-admin')), 'content-type': type, ...extra },
      });
    for (const [payload, type, extra] of [
      ['{not json', 'application/json', {}],
      ['[1,2]', 'application/json', {}],
      ['{"resourceSpans": 7}', 'application/json', {}],
      [Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), 'application/x-protobuf', {}],
      [Buffer.from('not gzip'), 'application/json', { 'content-encoding': 'gzip' }],
    ] as [Buffer | string, string, Record<string, string>][]) {
      const res = await post(payload, type, extra);
      expect(res.status).toBe(400);
      if (type === 'application/json') expect(((await res.json()) as { code: number }).code).toBe(3);
    }
    expect(await t.traces.countSpans()).toBe(before);
  });

  it('answers an empty request with full success', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/traces',
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
  });

  it('needs authentication and the right to create content', async () => {
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      }),
      401,
      'token_missing',
    );
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...(await t.auth('u-viewer')), 'content-type': 'application/json' },
        payload: JSON.stringify(body([span('d')])),
      }),
      403,
      'access_denied',
    );
    const other = await t.app.inject({
      method: 'POST',
      url: '/v1/traces',
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
      payload: JSON.stringify(body([span('e')], attrs({ 'workspace.id': 'ws-b' }))),
    });
    expect(other.json().partialSuccess.rejectedSpans).toBe(1);
    expectProblem(
      await t.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...(await t.auth('u-admin')), 'content-type': 'text/plain' },
        payload: 'x',
      }),
      415,
      'unsupported_content_type',
    );
  });
});
