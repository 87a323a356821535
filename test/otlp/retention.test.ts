/**
 * TRACE_RETENTION_DAYS: the setting is read as a number of days (default 30; 0 keeps everything),
 * and a retention run deletes, in the service's own trace store, exactly the spans and metric
 * points that started more than that many days before the run; with 0 the store is never pruned;
 * a store that fails is reported, not fatal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type { SpanRow, TraceStore } from '../../src/store/trace-port.ts';
import { startRetention } from '../../src/otlp/retention.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { recordingLogger } from '../helpers/log-recorder.ts';

const NOW_S = Date.UTC(2026, 10, 20) / 1000;
const DAY = 86400;

function span(i: number, startS: number): SpanRow {
  return spanRow(0xa000 + i, {
    name: 'invoke',
    start_s: startS,
    category: 'skill_invocation',
    skill: 'sk-1',
    session: `s-${i}`,
    tokens: 1,
  });
}

describe('TRACE_RETENTION_DAYS', () => {
  it('is a whole number of days, 30 by default, 0 for keeping everything', () => {
    expect(loadConfig({}).traceRetentionDays).toBe(30);
    expect(loadConfig({ TRACE_RETENTION_DAYS: '' }).traceRetentionDays).toBe(30);
    expect(loadConfig({ TRACE_RETENTION_DAYS: '7' }).traceRetentionDays).toBe(7);
    expect(loadConfig({ TRACE_RETENTION_DAYS: '0' }).traceRetentionDays).toBe(0);
    expect(() => loadConfig({ TRACE_RETENTION_DAYS: '-1' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRACE_RETENTION_DAYS: 'a month' })).toThrow(ConfigError);
  });
});

describe('a retention run', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('deletes what started before now minus the days, spans and metric points, and nothing else', async () => {
    const base = await t.traces.countSpans();
    const old = [span(1, NOW_S - 31 * DAY), span(2, NOW_S - 30 * DAY - 1)];
    const young = [span(3, NOW_S - 30 * DAY), span(4, NOW_S - DAY)];
    await t.traces.insertSpans([...old, ...young]);
    const point = (session: string, time_s: number) => ({
      org_id: 'org-a',
      key: `${session}-${time_s}`,
      workspace_id: 'ws-a-team',
      session,
      metric: 'commits' as const,
      time_s,
      value: 1,
    });
    await t.traces.insertMetricPoints([point('s-3', NOW_S - 31 * DAY), point('s-3', NOW_S - 30 * DAY)]);
    const log = recordingLogger();
    const retention = startRetention(t.traces, 30, log, () => NOW_S * 1000 + 500);
    retention.stop();
    // The run started by startRetention, then one more that finds nothing left to delete.
    await expect.poll(() => t.traces.countSpans()).toBe(base + young.length);
    expect(await retention.run()).toBe(0);
    expect(log.lines).toContainEqual({
      level: 'info',
      obj: { spans: old.length, cutoffS: NOW_S - 30 * DAY, days: 30 },
      msg: 'trace retention: deleted spans before the cutoff',
    });
    const commits = await t.traces.aggregate({
      orgId: 'org-a',
      subject: { skill: 'sk-1' },
      startS: NOW_S - 40 * DAY,
      endS: NOW_S,
      workspaceIds: ['ws-a-team'],
      filters: [],
      groupBy: [],
      measures: ['commits', 'spans'],
    });
    expect(commits[0]?.values).toEqual({ commits: 1, spans: 2 });
  });

  it('with the default setting deletes what is older than 30 days; with 0 never asks the store', async () => {
    const cutoffs: number[] = [];
    const store = {
      pruneBefore: async (cutoffS: number) => {
        cutoffs.push(cutoffS);
        return 1;
      },
    } as unknown as TraceStore;
    const off = loadConfig({ TRACE_RETENTION_DAYS: '0' }).traceRetentionDays;
    const kept = startRetention(store, off, recordingLogger(), () => NOW_S * 1000);
    kept.stop();
    expect(await kept.run()).toBe(0);
    const pruned = startRetention(store, loadConfig({}).traceRetentionDays, recordingLogger(), () => NOW_S * 1000);
    pruned.stop();
    expect(await pruned.run()).toBe(1);
    expect(cutoffs).toEqual([NOW_S - 30 * DAY, NOW_S - 30 * DAY]);
  });

  it('a store that fails is reported and the run answers 0', async () => {
    const failing = {
      pruneBefore: () => Promise.reject(new Error('disk gone')),
    } as unknown as TraceStore;
    const log = recordingLogger();
    const retention = startRetention(failing, 7, log, () => NOW_S * 1000);
    retention.stop();
    expect(await retention.run()).toBe(0);
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toContain(
      'trace retention failed; retried in an hour',
    );
  });
});
