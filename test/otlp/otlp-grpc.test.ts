/**
 * OTLP over gRPC (OTLP_GRPC_PORT): the OpenTelemetry JS SDK's gRPC exporters for traces, logs and
 * metrics, configured only through OTEL_EXPORTER_OTLP_* (gzip included), reach the statistics; a
 * raw gRPC client sees the HTTP receiver's answers as gRPC status codes (no token, a bad token, a
 * malformed message, a message over the bound, partial success).
 */
import * as grpc from '@grpc/grpc-js';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpGrpc, type OtlpGrpcServer } from '../../src/grpc/otlp-grpc.ts';
import { encodeExportRequest } from '../../src/otlp/traces/decode.ts';
import { otlpMessages } from '../../src/otlp/messages.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { scalarStats } from '../helpers/scalar-stats.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const MAX_BYTES = 64 * 1024;
let t: TestApp;
let server: OtlpGrpcServer;
let client: grpc.Client;
beforeAll(async () => {
  t = await startTestApp({ env: { OTLP_MAX_DECOMPRESSED_BYTES: String(MAX_BYTES) } });
  server = await startOtlpGrpc(t.app, {
    config: t.config,
    port: 0,
    authenticate: (h) => t.authenticator.authenticate(h),
    registry: t.registry,
  });
  client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${server.port}`;
  process.env.OTEL_EXPORTER_OTLP_HEADERS = `authorization=Bearer ${await t.token('u-admin')}`;
  process.env.OTEL_EXPORTER_OTLP_COMPRESSION = 'gzip';
});
afterAll(async () => {
  client.close();
  await server.close();
  await t.close();
});

const resource = resourceFromAttributes({ 'service.name': 'grpc-harness', 'workspace.id': 'ws-a-team' });

const skillStats = (from: number) =>
  scalarStats(t, {
    skill: 'sk-1',
    start: from,
    end: from + 3600,
    measures: { spans: 'spans', tokens: 'tokens', invocations: 'skill_invocations' },
  });

/** One unary Export call with raw bytes: the answer's bytes, or the gRPC error. */
function exportCall(
  service: string,
  body: Buffer,
  token?: string,
): Promise<{ ok: Buffer } | { error: grpc.ServiceError }> {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      `/opentelemetry.proto.collector.${service}/Export`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      metadata,
      (error, value) => {
        resolve(error ? { error } : { ok: value ?? Buffer.alloc(0) });
      },
    );
  });
}

function span(at: number, i: number, attributes: object[]) {
  const id = (n: number, len: number) => Buffer.from(n.toString(16).padStart(len * 2, '0'), 'hex');
  return {
    traceId: id(at, 16),
    spanId: id(at * 10 + i, 8),
    name: 'invoke_skill',
    startTimeUnixNano: `${at}000000000`,
    endTimeUnixNano: `${at}100000000`,
    attributes,
  };
}

describe('OpenTelemetry SDK gRPC exporters configured by OTEL_EXPORTER_OTLP_* only (gzip)', () => {
  it('traces', async () => {
    const at = 1_700_200_000;
    const provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
    });
    const tracer = provider.getTracer('grpc-test');
    tracer
      .startSpan('invoke_skill', {
        startTime: at * 1000,
        attributes: { 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'sk-1', 'gen_ai.usage.input_tokens': 7 },
      })
      .end((at + 1) * 1000);
    await provider.forceFlush();
    await provider.shutdown();
    expect(await skillStats(at - 60)).toEqual({ spans: 1, tokens: 7, invocations: 1 });
  });

  it('logs (Claude Code events)', async () => {
    const at = 1_700_300_000;
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'claude-code', 'workspace.id': 'ws-a-team' }),
      processors: [new SimpleLogRecordProcessor({ exporter: new OTLPLogExporter() })],
    });
    const logger = provider.getLogger('com.anthropic.claude_code.events');
    const common = { 'session.id': 's-grpc', 'prompt.id': 'p-grpc' };
    logger.emit({
      timestamp: at * 1000,
      body: 'claude_code.skill_activated',
      attributes: { ...common, 'event.name': 'skill_activated', 'skill.name': 'summarize' },
    });
    logger.emit({
      timestamp: (at + 1) * 1000,
      body: 'claude_code.api_request',
      attributes: { ...common, 'event.name': 'api_request', input_tokens: '5', output_tokens: '6', duration_ms: '10' },
    });
    await provider.forceFlush();
    await provider.shutdown();
    expect(await skillStats(at - 60)).toEqual({ spans: 2, tokens: 11, invocations: 1 });
  });

  it('metrics: the export succeeds and its delta point is stored', async () => {
    process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE = 'delta';
    const exporter = new OTLPMetricExporter();
    delete process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE;
    const codes: number[] = [];
    const send = exporter.export.bind(exporter);
    exporter.export = (metrics, done) => {
      send(metrics, (r) => {
        codes.push(r.code);
        done(r);
      });
    };
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const meter = new MeterProvider({ resource, readers: [reader] }).getMeter('m');
    meter.createCounter('claude_code.commit.count').add(1, { 'session.id': 's-grpc' });
    await reader.forceFlush();
    await reader.shutdown();
    expect(codes.length).toBeGreaterThan(0);
    expect(codes.every((c) => c === 0)).toBe(true);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    // Delta: the second export (at shutdown) has nothing new to send.
    expect(metrics.body).toContain('gateway_otlp_records_total{signal="metrics",outcome="stored"} 1\n');
    expect(metrics.body).not.toContain('gateway_otlp_records_total{signal="metrics",outcome="rejected"}');
  });
});

describe('gRPC answers are the HTTP receiver’s', () => {
  const TRACES = 'trace.v1.TraceService';
  const Response = otlpMessages.lookupType('otlp.ExportTraceServiceResponse');

  it('no token: UNAUTHENTICATED; a user without write rights: PERMISSION_DENIED', async () => {
    const body = encodeExportRequest(otlpTraceBody());
    const none = await exportCall(TRACES, body);
    expect('error' in none && none.error.code).toBe(grpc.status.UNAUTHENTICATED);
    const viewer = await exportCall(TRACES, body, await t.token('u-viewer'));
    expect('error' in viewer && viewer.error.code).toBe(grpc.status.PERMISSION_DENIED);
    const bad = await exportCall(TRACES, body, 'not-a-jwt');
    expect('error' in bad && bad.error.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it('a malformed message: INVALID_ARGUMENT with the receiver’s reason; one over the bound: RESOURCE_EXHAUSTED', async () => {
    const token = await t.token('u-admin');
    const garbage = await exportCall(TRACES, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), token);
    expect('error' in garbage && garbage.error.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect('error' in garbage && garbage.error.details).toMatch(/./);
    const huge = await exportCall(TRACES, Buffer.alloc(MAX_BYTES + 1), token);
    expect('error' in huge && huge.error.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('partial success: the rejected spans and the reason, as over HTTP', async () => {
    const at = 1_700_400_000;
    const body = encodeExportRequest(
      otlpTraceBody({
        resource: attrs({ 'workspace.id': 'ws-a-team' }),
        spans: [
          span(at, 1, attrs({ 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'sk-1' })),
          span(at, 2, attrs({ 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'no-such-skill' })),
        ],
      }),
    );
    const res = await exportCall(TRACES, body, await t.token('u-admin'));
    expect('ok' in res).toBe(true);
    const answer = Response.toObject(Response.decode('ok' in res ? res.ok : Buffer.alloc(0)), { longs: Number });
    expect(answer).toEqual({
      partialSuccess: {
        rejectedSpans: 1,
        errorMessage: '1 span(s): skill "no-such-skill" does not exist or the sender cannot read it',
      },
    });
    expect(await skillStats(at - 60)).toMatchObject({ spans: 1, invocations: 1 });
  });
});
