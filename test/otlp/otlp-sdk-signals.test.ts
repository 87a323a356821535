/**
 * The OpenTelemetry JS SDK's logs and metrics exporters against a listening gateway, configured
 * only through the standard OTEL_EXPORTER_OTLP_* environment variables, as a harness would be:
 * log records shaped like Claude Code's events reach the skill's statistics, and so do its
 * counters sent as delta sums (cumulative ones are refused in the partial success).
 */
import { OTLPLogExporter as LogsProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as LogsJsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPMetricExporter as MetricsProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scalarStats } from '../helpers/scalar-stats.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await startTestApp();
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  // What a harness's environment holds; every exporter below reads it and nothing else.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = url;
  process.env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer ${await t.token('u-admin')}`;
});
afterAll(async () => {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
  await t.close();
});

const resource = resourceFromAttributes({ 'service.name': 'claude-code', 'workspace.id': 'ws-a-team' });

const skillStats = (from: number) =>
  scalarStats(t, {
    skill: 'sk-1',
    start: from,
    end: from + 3600,
    measures: { spans: 'spans', tokens: 'tokens', invocations: 'skill_invocations', sessions: 'sessions' },
  });

async function sendClaudeEvents(exporter: LogRecordExporter, at: number, prompt: string) {
  const provider = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter })] });
  const logger = provider.getLogger('com.anthropic.claude_code.events');
  const common = { 'session.id': `s-${prompt}`, 'prompt.id': prompt, 'user.id': 'install-1' };
  logger.emit({
    timestamp: at * 1000,
    body: 'claude_code.skill_activated',
    attributes: { ...common, 'event.name': 'skill_activated', 'skill.name': 'summarize' },
  });
  logger.emit({
    timestamp: (at + 2) * 1000,
    body: 'claude_code.api_request',
    attributes: {
      ...common,
      'event.name': 'api_request',
      model: 'claude-sonnet-4-5',
      input_tokens: '30',
      output_tokens: '12',
      cost_usd: '0.001',
      duration_ms: '800',
    },
  });
  logger.emit({ timestamp: (at + 3) * 1000, body: 'claude_code.auth', attributes: { ...common, action: 'login' } });
  await provider.forceFlush();
  await provider.shutdown();
}

describe('OpenTelemetry SDK exporters configured by OTEL_EXPORTER_OTLP_* only', () => {
  it.each([
    ['protobuf', () => new LogsProtoExporter(), 1_700_000_000],
    ['JSON', () => new LogsJsonExporter(), 1_700_100_000],
  ] as const)('logs over HTTP (%s): the events answer the skill statistics', async (_name, exporter, at) => {
    await sendClaudeEvents(exporter(), at, `prompt-${at}`);
    expect(await skillStats(at - 60)).toEqual({ spans: 2, tokens: 42, invocations: 1, sessions: 1 });
  });

  /** Claude Code's counters through the SDK's metrics exporter; the codes of its exports. */
  async function sendClaudeMetrics(session: string): Promise<number[]> {
    const exporter = new MetricsProtoExporter();
    const results: number[] = [];
    const export_ = exporter.export.bind(exporter);
    exporter.export = (metrics, done) => {
      export_(metrics, (r) => {
        results.push(r.code);
        done(r);
      });
    };
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const meter = new MeterProvider({ resource, readers: [reader] }).getMeter('com.anthropic.claude_code');
    const lines = meter.createCounter('claude_code.lines_of_code.count');
    lines.add(10, { type: 'added', 'session.id': session });
    lines.add(3, { type: 'removed', 'session.id': session });
    meter.createCounter('claude_code.commit.count').add(1, { 'session.id': session });
    meter.createCounter('claude_code.session.count').add(1, { 'session.id': session });
    await reader.forceFlush();
    await reader.shutdown();
    return results;
  }

  const counted = async (outcome: string) => {
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    const m = new RegExp(`gateway_otlp_records_total\\{signal="metrics",outcome="${outcome}"\\} (\\d+)`).exec(
      metrics.body,
    );
    return Number(m?.[1] ?? 0);
  };

  it("metrics over HTTP protobuf, delta (Claude Code's default): the counters answer the skill statistics", async () => {
    process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE = 'delta';
    try {
      const now = Math.floor(Date.now() / 1000);
      await sendClaudeEvents(new LogsProtoExporter(), now - 30, 'prompt-metrics');
      const results = await sendClaudeMetrics('s-prompt-metrics');
      expect(results.length).toBeGreaterThan(0);
      expect(results.every((code) => code === 0)).toBe(true);
      const stats = await scalarStats(t, {
        skill: 'sk-1',
        start: now - 600,
        end: now + 600,
        measures: { added: 'lines_added', removed: 'lines_removed', commits: 'commits', sessions: 'sessions' },
      });
      expect(stats).toEqual({ added: 10, removed: 3, commits: 1, sessions: 1 });
      // The session counter is not stored (the events' sessions answer it): one point ignored.
      expect(await counted('stored')).toBe(3);
      expect(await counted('ignored')).toBe(1);
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE;
    }
  });

  it('metrics over HTTP protobuf, cumulative (the SDK default): accepted, the points refused with the reason', async () => {
    const rejected = await counted('rejected');
    const results = await sendClaudeMetrics('s-cumulative');
    // The exporter reports success: a partial success is not an error to it.
    expect(results.every((code) => code === 0)).toBe(true);
    expect(await counted('rejected')).toBe(rejected + 3 * results.length);
  });
});
