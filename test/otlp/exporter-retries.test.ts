/**
 * Real OpenTelemetry JS exporters against a gateway made to fail the first attempt of every request
 * after committing it (the test-only OtlpFaults hook: a 503, or a 504 once the deadline has passed,
 * as a lost answer or a proxy's timeout would look): after the exporters' retries, every measure
 * equals a plain computation over the spans sent once. The HTTP exporters (protobuf and JSON) retry
 * 503 and 504 themselves; the JS gRPC exporter retries nothing, so its batches are sent again by
 * a wrapper, as the Collector's `retry_on_failure` and other SDKs' gRPC exporters do.
 */
import { createHash } from 'node:crypto';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { Metadata } from '@grpc/grpc-js';
import { SpanStatusCode, context, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpGrpc, type OtlpGrpcServer } from '../../src/grpc/otlp-grpc.ts';
import type { OtlpFaults } from '../../src/rest/otlp-routes.ts';
import { scalarStats } from '../helpers/scalar-stats.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** Fails the first attempt of each distinct body, alternately with a 503 and a late 504. */
class FirstAttemptFails implements OtlpFaults {
  readonly seen = new Set<string>();
  attempts = 0;
  afterCommit(body: Buffer): 'unavailable' | 'late' | null {
    this.attempts++;
    const digest = createHash('sha256').update(body).digest('hex');
    if (this.seen.has(digest)) return null;
    this.seen.add(digest);
    return this.seen.size % 2 === 1 ? 'unavailable' : 'late';
  }
}

/** Sends a failed batch again, up to five times: what the JS gRPC exporter leaves to its caller. */
function retrying(exporter: SpanExporter): SpanExporter {
  return {
    export(spans, done) {
      const attempt = (left: number) =>
        exporter.export(spans, (result) => {
          // A failed export carries its error; a successful one none.
          if (result.error === undefined || left === 0) done(result);
          else setTimeout(() => attempt(left - 1), 200);
        });
      attempt(4);
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

const faults = new FirstAttemptFails();
let t: TestApp;
let url: string;
let grpcServer: OtlpGrpcServer;
let token: string;
beforeAll(async () => {
  t = await startTestApp({ env: { REQUEST_TIMEOUT_MS: '1500' }, otlpFaults: faults });
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  grpcServer = await startOtlpGrpc(t.app, {
    config: t.config,
    port: 0,
    authenticate: (header) => t.authenticator.authenticate(header),
    registry: t.registry,
  });
  token = await t.token('u-admin');
});
afterAll(async () => {
  await grpcServer.close();
  await t.close();
});

interface Sent {
  invocations: { durationMs: number; error: boolean; tokens: number }[];
  tools: number;
}

/** 30 traces, each a skill invocation (some failing) with one tool call, through `exporter` in batches of 16 spans. */
async function send(exporter: SpanExporter, at: number): Promise<Sent> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'retry-harness', 'workspace.id': 'ws-a-team' }),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 16, scheduledDelayMillis: 60_000 })],
  });
  const tracer = provider.getTracer('retries');
  const sent: Sent = { invocations: [], tools: 0 };
  for (let i = 0; i < 30; i++) {
    const start = (at + i * 10) * 1000;
    const durationMs = 100 + ((i * 37) % 400);
    const tokens = 10 + i;
    const error = i % 7 === 0;
    const root = tracer.startSpan('invoke_skill', {
      startTime: start,
      attributes: { 'gen_ai.operation.name': 'invoke_skill', 'skill.id': 'sk-1', 'gen_ai.usage.input_tokens': tokens },
    });
    if (error) root.setStatus({ code: SpanStatusCode.ERROR });
    const tool = tracer.startSpan(
      'execute_tool',
      { startTime: start + 10, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' } },
      trace.setSpan(context.active(), root),
    );
    tool.end(start + 20);
    root.end(start + durationMs);
    sent.invocations.push({ durationMs, error, tokens });
    sent.tools++;
  }
  await provider.forceFlush();
  await provider.shutdown();
  return sent;
}

/** Nearest-rank percentile, as the statistics define it. */
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

async function expectOnce(at: number, sent: Sent): Promise<void> {
  const stats = await scalarStats(t, {
    skill: 'sk-1',
    start: at - 60,
    end: at + 3600,
    measures: {
      invocations: 'skill_invocations',
      tokens: 'tokens',
      errors: 'error_rate',
      p50: 'latency_p50',
      p99: 'latency_p99',
      traces: 'traces',
      spans: 'spans',
      tools: 'tool_calls',
    },
  });
  const durations = sent.invocations.map((s) => s.durationMs);
  expect(stats).toEqual({
    invocations: sent.invocations.length,
    tokens: sent.invocations.reduce((n, s) => n + s.tokens, 0),
    errors: sent.invocations.filter((s) => s.error).length / sent.invocations.length,
    p50: percentile(durations, 50),
    p99: percentile(durations, 99),
    traces: sent.invocations.length,
    spans: sent.invocations.length + sent.tools,
    tools: sent.tools,
  });
}

describe('exporters retrying requests the gateway committed but answered with an error', () => {
  it.each([
    [
      'HTTP protobuf',
      () => new ProtoExporter({ url: `${url}/v1/traces`, headers: { authorization: `Bearer ${token}` } }),
    ],
    ['HTTP JSON', () => new JsonExporter({ url: `${url}/v1/traces`, headers: { authorization: `Bearer ${token}` } })],
    [
      'gRPC',
      () => {
        const metadata = new Metadata();
        metadata.set('authorization', `Bearer ${token}`);
        return retrying(new GrpcExporter({ url: `http://127.0.0.1:${grpcServer.port}`, metadata }));
      },
    ],
  ] as const)('%s: every measure as if each span had been sent once', async (name, make) => {
    // Each exporter in an hour of its own.
    const window =
      Math.floor(Date.now() / 1000) - (2 + ['HTTP protobuf', 'HTTP JSON', 'gRPC'].indexOf(name) * 2) * 3600;
    const before = { bodies: faults.seen.size, attempts: faults.attempts };
    const sent = await send(make(), window);
    const bodies = faults.seen.size - before.bodies;
    // 60 spans in batches of at most 16: at least four requests, each failed once and sent again.
    expect(bodies).toBeGreaterThanOrEqual(4);
    expect(faults.attempts - before.attempts).toBe(2 * bodies);
    await expectOnce(window, sent);
  });
});
