/**
 * A replica that loses the detection lease mid-run stops (docs/insights.md "The schedule"), over
 * the real registry store of each mode: replica A's first step stalls past the lease's end,
 * replica B takes the lease and runs the organization's steps; when A's step returns, A writes
 * nothing of it and computes no further step, so no step but the one in flight is computed twice
 * and the cursor is B's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DetectionConfig } from '../../src/config-detection.ts';
import { startDetection } from '../../src/insights/scheduler.ts';
import type { DetectionState } from '../../src/store/detection-state-port.ts';
import type { EvaluationFactsReader, SubjectFactsReader } from '../../src/store/facts-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';
import { onDetectionEngines } from '../helpers/detection-engines.ts';

const HOUR = 3600;
const LATEST = Date.UTC(2026, 10, 1, 12) / 1000;
const CONFIG: DetectionConfig = {
  enabled: false,
  intervalMs: 300_000,
  maxSteps: 24,
  subjectsPerCall: 200,
  maxSubjects: 2000,
  settleS: 900,
};
const empty = { rows: [], subjects: 0, next: null };
const state = {
  agentIds: async () => [],
  pagePositions: async () => ({}),
  setPagePositions: async () => undefined,
} as unknown as DetectionState;
const evaluations: EvaluationFactsReader = { evaluationFacts: async () => empty };

function leaseSuite(engine: string, open: () => Promise<{ registry: RegistryStore; traces: TraceStore }>) {
  describe(`a replica that loses the detection lease stops: ${engine}`, () => {
    let registry: RegistryStore;
    let traceStore: TraceStore;
    beforeAll(async () => {
      ({ registry, traces: traceStore } = await open());
    });
    afterAll(async () => {
      await traceStore.close();
      await registry.close();
    });

    it('stops before writing its stalled step and before computing another', async () => {
      // Three steps to do: LATEST - 2 h, LATEST - 1 h, LATEST (the latest one settled).
      let clock = (LATEST + 900 + 60) * 1000;
      await registry.insights.setDetectionCursor('org-a', LATEST - 3 * HOUR);
      const calls: string[] = [];
      let release: () => void = () => undefined;
      const stalled = new Promise<void>((r) => {
        release = r;
      });
      const traces = (who: string): SubjectFactsReader => ({
        activeOrganizations: async () => ['org-a'],
        firstSpanS: async (_orgId, sinceS) => sinceS,
        subjectFacts: async (q) => {
          calls.push(`${who} ${String((q.windows[0]?.endS ?? 0) - LATEST)} ${q.subjectType}`);
          if (who === 'A' && calls.filter((c) => c.startsWith('A')).length === 1) {
            clock += 11 * 60_000; // past the lease of 10 minutes
            await stalled;
          }
          return empty;
        },
      });
      const replica = (who: string) =>
        startDetection({
          traces: traces(who),
          evaluations,
          insights: registry.insights,
          state,
          config: CONFIG,
          log: { info: () => undefined, warn: () => undefined },
          holder: who,
          now: () => clock,
        });
      const a = replica('A').runOnce();
      while (calls.length === 0) await new Promise((r) => setTimeout(r, 5));
      const b = await replica('B').runOnce();
      expect(b.leader).toBe(true);
      expect(b.orgs.map((o) => [o.steps, o.cursorS, o.leaseLost])).toEqual([[3, LATEST, false]]);
      release();
      const aRun = await a;
      expect(aRun.orgs.map((o) => [o.steps, o.cursorS, o.leaseLost])).toEqual([[0, LATEST - 3 * HOUR, true]]);
      expect(await registry.insights.detectionCursor('org-a')).toBe(LATEST);
      expect(calls.filter((c) => c.startsWith('A'))).toEqual(['A -7200 skill', 'A -7200 agent']);
      const bCalls = calls.filter((c) => c.startsWith('B'));
      expect(bCalls).toEqual(
        [-7200, -3600, 0].flatMap((step) => [`B ${String(step)} skill`, `B ${String(step)} agent`]),
      );
      // A does not take the lease back while B holds it.
      expect(await registry.insights.tryLease('insight-detection', 'A', clock, 1000)).toBe(false);
    });
  });
}

await onDetectionEngines('lease_loss', 'a replica that loses the detection lease stops', LATEST, leaseSuite);
