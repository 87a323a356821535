/**
 * INSIGHT_RETENTION_DAYS (src/insights/retention.ts): the setting (default 90; 0 keeps everything;
 * otherwise at least the longest cooldown), and runs over each engine's insight store: what ended
 * before now minus the days goes in batches until none is left, at most a capped number of batches
 * a run (the next run goes on), counted in /metrics; one replica at a time holds the work; a
 * failing store is reported, not fatal.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { startInsightRetention } from '../../src/insights/retention.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { InsightStore } from '../../src/store/insight-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { insight } from '../contract/insight-contract.ts';
import { onDetectionEngines } from '../helpers/detection-engines.ts';
import { recordingLogger } from '../helpers/log-recorder.ts';

const NOW_S = Date.UTC(2026, 10, 20) / 1000;
const DAY = 86400;
const CUTOFF = NOW_S - 90 * DAY;
const now = () => NOW_S * 1000 + 500;

/** `s` as retention uses it, calling `hook` before each batch. */
const beforeEachBatch = (s: InsightStore, hook: () => void): Pick<InsightStore, 'pruneInsights' | 'tryLease'> => ({
  tryLease: (...a) => s.tryLease(...a),
  pruneInsights: (cutoffS, limit) => {
    hook();
    return s.pruneInsights(cutoffS, limit);
  },
});

const ending = (id: string, endS: number) => insight(id, { window_start_s: endS - DAY, window_end_s: endS });

describe('INSIGHT_RETENTION_DAYS', () => {
  it('is a whole number of days, 90 by default, 0 for keeping everything, else 30 to 36500', () => {
    expect(loadConfig({}).insightRetentionDays).toBe(90);
    expect(loadConfig({ INSIGHT_RETENTION_DAYS: '' }).insightRetentionDays).toBe(90);
    expect(loadConfig({ INSIGHT_RETENTION_DAYS: '0' }).insightRetentionDays).toBe(0);
    expect(loadConfig({ INSIGHT_RETENTION_DAYS: '30' }).insightRetentionDays).toBe(30);
    expect(loadConfig({ INSIGHT_RETENTION_DAYS: '36500' }).insightRetentionDays).toBe(36_500);
    for (const bad of ['-1', 'a year', '90.5', '36501'])
      expect(() => loadConfig({ INSIGHT_RETENTION_DAYS: bad }), bad).toThrow(ConfigError);
  });

  it('refuses a retention shorter than the longest cooldown, saying why', () => {
    for (const short of ['1', '29'])
      expect(() => loadConfig({ INSIGHT_RETENTION_DAYS: short })).toThrow(
        new ConfigError(
          `INSIGHT_RETENTION_DAYS must be 0 (keep every insight) or at least 30, the longest cooldown_hours (720 h) in days, got ${short}`,
        ),
      );
  });

  it('with 0 never asks the store', async () => {
    let asked = 0;
    const store = { pruneInsights: async () => ++asked, tryLease: async () => true };
    const retention = startInsightRetention({ insights: store, days: 0, log: recordingLogger(), now });
    retention.stop();
    expect(await retention.run()).toBe(0);
    expect(asked).toBe(0);
  });

  it('a store that fails is reported and the run answers 0', async () => {
    const store = { pruneInsights: () => Promise.reject(new Error('disk gone')), tryLease: async () => true };
    const log = recordingLogger();
    const retention = startInsightRetention({ insights: store, days: 90, log, now });
    retention.stop();
    expect(await retention.run()).toBe(0);
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'insight retention failed; retried in an hour',
      'insight retention failed; retried in an hour',
    ]);
  });
});

await onDetectionEngines('insight_retention', 'insight retention runs', NOW_S, (engine, open) => {
  describe(`insight retention runs: ${engine}`, () => {
    const fresh = async () => {
      const { registry, traces } = await open();
      await traces.close();
      await registry.importBundle(parseBundle(smallBundle()));
      return registry;
    };
    const old = (n: number, prefix = 'old') =>
      Array.from({ length: n }, (_, i) => ending(`${prefix}-${String(i)}`, CUTOFF - 1 - i * 3600));
    const left = async (s: InsightStore, ids: string[]) => (await s.getInsights('org-a', ids)).map((i) => i.id).sort();

    it('deletes in batches until none is left before the cutoff, counted in /metrics', async () => {
      const registry = await fresh();
      const s = registry.insights;
      const gone = old(7);
      await s.recordInsights([...gone, ending('at-cutoff', CUTOFF), ending('young', NOW_S - DAY)], now());
      const metrics = createMetrics({ defaultMetrics: false });
      const log = recordingLogger();
      const retention = startInsightRetention({
        insights: s,
        days: 90,
        log,
        pruned: metrics.detection.pruned,
        batch: 2,
        now,
      });
      retention.stop();
      // The run started at start deleted all 7 in 4 batches; the next finds nothing.
      expect(await retention.run()).toBe(0);
      expect(await left(s, [...gone.map((i) => i.id), 'at-cutoff', 'young'])).toEqual(['at-cutoff', 'young']);
      expect(await metrics.registry.metrics()).toContain('gateway_insights_pruned_total 7');
      expect(log.lines).toContainEqual({
        level: 'info',
        obj: { insights: 7, cutoffS: CUTOFF, days: 90 },
        msg: 'insight retention: deleted insights before the cutoff',
      });
      await registry.close();
    });

    it('stops a run at its cap of batches; the next run goes on', async () => {
      const registry = await fresh();
      const s = registry.insights;
      const gone = old(9);
      await s.recordInsights(gone, now());
      const log = recordingLogger();
      const retention = startInsightRetention({ insights: s, days: 90, log, batch: 2, maxBatches: 2, now });
      retention.stop();
      // The run at start: 2 batches of 2, then the cap; this one the same; the next the last one.
      expect(await retention.run()).toBe(4);
      expect(
        await left(
          s,
          gone.map((i) => i.id),
        ),
      ).toEqual(['old-0']);
      expect(await retention.run()).toBe(1);
      expect(await retention.run()).toBe(0);
      expect(log.lines.filter((l) => l.msg.includes('continued at the next run'))).toHaveLength(2);
      await registry.close();
    });

    it('lets the event loop run between batches, though SQLite answers without waiting', async () => {
      const registry = await fresh();
      const s = registry.insights;
      await s.recordInsights(old(6), now());
      // A macrotask counter, read at each batch: batches in one macrotask would hold every request back.
      let ticks = 0;
      let on = true;
      const tick = () => {
        ticks++;
        if (on) setImmediate(tick);
      };
      setImmediate(tick);
      const seen: number[] = [];
      const counted = beforeEachBatch(s, () => seen.push(ticks));
      const batched = startInsightRetention({ insights: counted, days: 90, log: recordingLogger(), batch: 2, now });
      batched.stop();
      expect(await batched.run()).toBe(0);
      on = false;
      // The run at start: 3 full batches and the empty one, each after a turn of the event loop; then run()'s empty one.
      expect(seen).toHaveLength(5);
      for (let i = 1; i < 4; i++) expect(seen[i], `batch ${String(i)}`).toBeGreaterThan(seen[i - 1] ?? 0);
      await registry.close();
    });

    it('moves the cutoff back by how far detection trails the clock', async () => {
      const registry = await fresh();
      const s = registry.insights;
      const lagS = 900 + 3600;
      await s.recordInsights([ending('trailing', CUTOFF - lagS), ending('before', CUTOFF - lagS - 1)], now());
      const retention = startInsightRetention({ insights: s, days: 90, lagS, log: recordingLogger(), now });
      retention.stop();
      expect(await retention.run()).toBe(0);
      // The step detection computes now ends settle + a step ago: its cooldown reads back from there.
      expect(await left(s, ['trailing', 'before'])).toEqual(['trailing']);
      await registry.close();
    });

    it('stop() ends a run under way after its batch', async () => {
      const registry = await fresh();
      const s = registry.insights;
      await s.recordInsights(old(6), now());
      let batches = 0;
      const stopping = beforeEachBatch(s, () => {
        batches++;
        retention.stop();
      });
      const retention = startInsightRetention({ insights: stopping, days: 90, log: recordingLogger(), batch: 2, now });
      // The run at start: its first batch stops it; the run asked afterwards stops after its first batch too.
      expect(await retention.run()).toBe(2);
      expect(batches).toBe(2);
      expect(
        (
          await s.getInsights(
            'org-a',
            old(6).map((i) => i.id),
          )
        ).length,
      ).toBe(2);
      await registry.close();
    });

    it('one replica at a time: another holding the lease leaves the work to it', async () => {
      const registry = await fresh();
      const s = registry.insights;
      const a = startInsightRetention({ insights: s, days: 90, log: recordingLogger(), holder: 'replica-a', now });
      a.stop();
      expect(await a.run()).toBe(0);
      await s.recordInsights(old(3, 'later'), now());
      const b = startInsightRetention({ insights: s, days: 90, log: recordingLogger(), holder: 'replica-b', now });
      b.stop();
      expect(await b.run()).toBe(0);
      expect(await left(s, ['later-0', 'later-1', 'later-2'])).toHaveLength(3);
      expect(await a.run()).toBe(3);
      await registry.close();
    });
  });
});
