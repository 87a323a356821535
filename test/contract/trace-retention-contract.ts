/**
 * Retention (TraceStore.pruneBefore, TRACE_RETENTION_DAYS) on every engine: what starts before the
 * cutoff is gone, and every answer over a range from the cutoff on is what it was, including the
 * spans of traces whose skill invocation (or span naming their agent) was pruned (their mapping
 * stays while they do) and the metric points of their sessions. Expected values come from the reference, never the engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HARNESS_MEASURES, MEASURES, type AggregateQuery, type TraceStore } from '../../src/store/trace-port.ts';
import { END, generated, metricPoints } from './trace-contract.ts';
import { expectSameRows, reference } from './trace-reference.ts';

export interface RetentionSteps {
  /** Runs after loading and before pruning (DuckDB: seal, or not). */
  beforePrune?: (store: TraceStore) => Promise<void>;
  /** Runs after pruning and before the queries (DuckDB: seal what was left unsealed). */
  afterPrune?: (store: TraceStore) => Promise<void>;
}

// Inside a day: the pairs it cuts keep spans on the day it falls on (PostgreSQL's rollups mark them special).
const CUTOFF = END - 20 * 86400 + 5 * 3600 + 17;

export function retentionContract(engine: string, open: () => Promise<TraceStore>, steps: RetentionSteps = {}): void {
  describe(`trace store retention: ${engine}`, () => {
    let store: TraceStore;
    const spans = generated();
    const points = metricPoints(spans);
    const kept = spans.filter((s) => s.start_s >= CUTOFF);
    const base: AggregateQuery = {
      orgId: 'org-1',
      subject: { skill: 'sk-a' },
      startS: CUTOFF,
      endS: END,
      workspaceIds: ['ws-1', 'ws-2'],
      filters: [],
      groupBy: [],
      measures: [...MEASURES],
    };
    const queries: [string, AggregateQuery][] = [
      ['every measure', base],
      [
        'a day series by model',
        { ...base, groupBy: ['model'], bucket: 'day', measures: ['traces', 'spans', 'lines_added'] },
      ],
      ['a table by tool', { ...base, groupBy: ['tool'], measures: ['tool_calls', 'latency_p90', 'commits'] }],
      // Shapes PostgreSQL sums from its rollups.
      [
        'a summed day series by model',
        { ...base, groupBy: ['model'], bucket: 'day', measures: ['traces', 'spans', 'tokens', 'latency_p99'] },
      ],
      ['summed traces by user', { ...base, groupBy: ['user'], measures: ['traces', 'error_rate'] }],
      // An agent's traces keep their mapping while they keep spans, as a skill's.
      ['an agent: every measure', { ...base, subject: { agent: 'agent-0001' } }],
      [
        'an agent: a day series by model',
        { ...base, subject: { agent: 'planner' }, groupBy: ['model'], bucket: 'day', measures: ['traces', 'spans'] },
      ],
    ];
    let pruned = 0;

    beforeAll(async () => {
      store = await open();
      for (let i = 0; i < spans.length; i += 1000) await store.insertSpans(spans.slice(i, i + 1000));
      await store.insertMetricPoints(points);
      await steps.beforePrune?.(store);
      pruned = await store.pruneBefore(CUTOFF);
      await steps.afterPrune?.(store);
    });
    afterAll(async () => {
      await store.close();
    });

    it('deletes the spans before the cutoff and keeps the others', async () => {
      expect(pruned).toBe(spans.length - kept.length);
      expect(pruned).toBeGreaterThan(1000);
      expect(await store.countSpans()).toBe(kept.length);
      // Pruning again finds nothing more.
      expect(await store.pruneBefore(CUTOFF)).toBe(0);
    });

    it('the data holds traces whose invocation is pruned and whose other spans are kept', () => {
      const invokedBefore = new Set(
        spans.filter((s) => s.category === 'skill_invocation' && s.start_s < CUTOFF).map((s) => s.trace_id),
      );
      const keptInvoked = new Set(kept.filter((s) => s.category === 'skill_invocation').map((s) => s.trace_id));
      const straddling = kept.filter((s) => invokedBefore.has(s.trace_id) && !keptInvoked.has(s.trace_id));
      expect(straddling.length).toBeGreaterThan(10);
    });

    it.each(queries)('%s over a range from the cutoff answers as before pruning', async (_name, q) => {
      const rows = await store.aggregate(q);
      expectSameRows(rows, reference(spans, q, points));
      if (q.groupBy.length === 0) for (const m of HARNESS_MEASURES) expect(rows[0]?.values[m], m).toBeGreaterThan(0);
    });

    it.each(queries)('%s over a range across the cutoff sees nothing before it', async (_name, q) => {
      const across = { ...q, startS: CUTOFF - 10 * 86400 };
      expectSameRows(await store.aggregate(across), reference(spans, q, points));
    });
  });
}
