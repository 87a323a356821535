/**
 * Exactly once (DESIGN §12) on every engine: a span is identified by (organization, trace id, span
 * id, start second) and a metric point by (organization, key, time); delivered any number of times,
 * in one call or several, at once or one after the other, before or after sealing, each is stored
 * and counted once, and every answer equals the reference over the rows taken once. Expected values
 * come from the reference, never from the engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  QueryCancelledError,
  type AggregateQuery,
  type MetricPointRow,
  type SpanRow,
  type TraceStore,
} from '../../src/store/trace-port.ts';
import { generated, metricPoints, skillQuery } from './trace-contract.ts';
import { expectSameRows, reference } from './trace-reference.ts';

export interface IdentitySteps {
  /** Seals what is stored (an engine's maintenance); resends after it must still be recognized. */
  seal: (store: TraceStore) => Promise<void>;
}

export function identityContract(engine: string, open: () => Promise<TraceStore>, steps: IdentitySteps): void {
  describe(`trace store identities: ${engine}`, () => {
    let store: TraceStore;
    // Recent spans (the last days before END, which the engines take as now) and old ones.
    const all = generated();
    const spans = all.filter((s) => s.org_id === 'org-1').slice(0, 3000);
    const points = metricPoints(spans).slice(0, 600);
    const base = skillQuery();
    const queries: AggregateQuery[] = [
      base,
      { ...base, groupBy: ['model'], bucket: 'day', measures: ['traces', 'spans', 'skill_invocations', 'commits'] },
      { ...base, groupBy: ['user'], measures: ['traces', 'tokens', 'lines_added', 'latency_p90'] },
    ];
    const exact = async (stored: SpanRow[], storedPoints: MetricPointRow[]) => {
      expect(await store.countSpans()).toBe(stored.length);
      for (const q of queries) expectSameRows(await store.aggregate(q), reference(stored, q, storedPoints));
    };

    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });

    it('stores a batch once however often it is delivered, one call after the other', async () => {
      const first = spans.slice(0, 1000);
      expect(await store.insertSpans(first)).toEqual({ stored: 1000, duplicates: 0 });
      expect(await store.insertSpans(first)).toEqual({ stored: 0, duplicates: 1000 });
      expect(await store.insertMetricPoints(points.slice(0, 200))).toEqual({ stored: 200, duplicates: 0 });
      expect(await store.insertMetricPoints(points.slice(0, 200))).toEqual({ stored: 0, duplicates: 200 });
      await exact(first, points.slice(0, 200));
    });

    it('stores a span once when one call carries it twice, and the rest of a partly stored batch', async () => {
      const batch = [...spans.slice(900, 1100), spans[1050] as SpanRow, spans[1099] as SpanRow];
      // 900..999 are stored already; 1000..1099 are new, two of them given twice.
      expect(await store.insertSpans(batch)).toEqual({ stored: 100, duplicates: 102 });
      const twice = [...points.slice(150, 250), points[240] as MetricPointRow];
      expect(await store.insertMetricPoints(twice)).toEqual({ stored: 50, duplicates: 51 });
      await exact(spans.slice(0, 1100), points.slice(0, 250));
    });

    it('stores a batch once when five calls deliver it at the same time', async () => {
      const batch = spans.slice(1100, 1600);
      const outcomes = await Promise.all(Array.from({ length: 5 }, () => store.insertSpans(batch)));
      expect(outcomes.reduce((n, o) => n + o.stored, 0)).toBe(500);
      expect(outcomes.reduce((n, o) => n + o.duplicates, 0)).toBe(2000);
      const pointOutcomes = await Promise.all(
        Array.from({ length: 3 }, () => store.insertMetricPoints(points.slice(250, 400))),
      );
      expect(pointOutcomes.reduce((n, o) => n + o.stored, 0)).toBe(150);
      await exact(spans.slice(0, 1600), points.slice(0, 400));
    });

    it('recognizes spans delivered again after they were sealed', async () => {
      await steps.seal(store);
      expect(await store.insertSpans(spans.slice(0, 1600))).toEqual({ stored: 0, duplicates: 1600 });
      expect(await store.insertSpans(spans.slice(1500, 2000))).toEqual({ stored: 400, duplicates: 100 });
      await exact(spans.slice(0, 2000), points.slice(0, 400));
      await steps.seal(store);
      await exact(spans.slice(0, 2000), points.slice(0, 400));
    });

    it('recognizes old spans (a backfill) delivered again, far outside the days of recent ones', async () => {
      const old = spans.slice(2000, 2100).map((s, i) => ({ ...s, start_s: s.start_s - (200 + i) * 86400 }));
      expect(await store.insertSpans(old)).toEqual({ stored: 100, duplicates: 0 });
      expect(await store.insertSpans([...old].reverse())).toEqual({ stored: 0, duplicates: 100 });
      expect(await store.countSpans()).toBe(2100);
    });

    it('keeps spans that share ids but not an organization or a start second: they are other spans', async () => {
      const s = spans[0] as SpanRow;
      const others = [
        { ...s, org_id: 'org-elsewhere' },
        { ...s, start_s: s.start_s + 1 },
      ];
      expect(await store.insertSpans(others)).toEqual({ stored: 2, duplicates: 0 });
      const p = points[0] as MetricPointRow;
      const otherPoints = [
        { ...p, org_id: 'org-elsewhere' },
        { ...p, time_s: p.time_s + 1 },
        { ...p, key: `${p.key}-other` },
      ];
      expect(await store.insertMetricPoints(otherPoints)).toEqual({ stored: 3, duplicates: 0 });
      expect(await store.countSpans()).toBe(2102);
      // org-1 gains the span moved by a second and the two points of its own identity, nothing else.
      const stored = [...spans.slice(0, 2000), { ...s, start_s: s.start_s + 1 }];
      const storedPoints = [...points.slice(0, 400), ...otherPoints.slice(1)];
      for (const q of queries) expectSameRows(await store.aggregate(q), reference(stored, q, storedPoints));
    });

    it('a write withdrawn before it begins stores nothing', async () => {
      const aborted = AbortSignal.abort();
      await expect(store.insertSpans(spans.slice(2500, 2600), aborted)).rejects.toBeInstanceOf(QueryCancelledError);
      await expect(store.insertMetricPoints(points.slice(500, 550), aborted)).rejects.toBeInstanceOf(
        QueryCancelledError,
      );
      expect(await store.countSpans()).toBe(2102);
      // Not withdrawn once begun: the same rows with a live signal are stored, and counted.
      expect(await store.insertSpans(spans.slice(2500, 2600), new AbortController().signal)).toEqual({
        stored: 100,
        duplicates: 0,
      });
    });
  });
}
