/**
 * The cooldown of `evaluation_drop` is kept per evaluation name (docs/insights.md "Rules"), over
 * the real registry store of each mode: a sender who makes up 19 evaluation names a step, each
 * dropping, buries the real evaluation's last insight under hundreds newer of the same kind and
 * subject; the real one is still found once in its cooldown (one insight, one delivery), looked up
 * by its own name rather than among the newest of its kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import { runOrganization } from '../../src/insights/run-organization.ts';
import type { DetectionState } from '../../src/store/detection-state-port.ts';
import type { EvaluationFacts, EvaluationFactsReader, SubjectFactsReader } from '../../src/store/facts-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';
import { drain, subscription } from '../contract/insight-contract.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { onDetectionEngines } from '../helpers/detection-engines.ts';

const HOUR = 3600;
const T0 = Date.UTC(2026, 10, 1) / 1000;
const STEPS = 12;
const JUNK = 19;
const empty = { rows: [], subjects: 0, next: null };

/** No subject facts; per step, sk-1's `victim` and 19 names made up for that step, each dropping from 0.9 to 0.2. */
const traces: SubjectFactsReader = {
  subjectFacts: async () => empty,
  activeOrganizations: async () => ['org-a'],
  firstSpanS: async (_orgId, sinceS) => sinceS,
};
const evaluations: EvaluationFactsReader = {
  evaluationFacts: async (q) => {
    if (q.subjectType !== 'skill') return empty;
    const step = q.windows[0]?.endS ?? 0;
    const names = ['victim', ...Array.from({ length: JUNK }, (_, i) => `junk-${String(step)}-${String(i)}`)];
    const rows: EvaluationFacts[] = names.flatMap((evaluationName) =>
      [0.2, 0.9].map((meanScore, window) => ({
        window,
        workspaceId: 'ws-a-team',
        subject: 'sk-1',
        evaluationName,
        meanScore,
        samples: 50,
      })),
    );
    return { rows, subjects: 1, next: null };
  },
};
const state = {
  agentIds: async () => [],
  pagePositions: async () => ({}),
  setPagePositions: async () => undefined,
} as unknown as DetectionState;

function cooldownSuite(engine: string, open: () => Promise<{ registry: RegistryStore; traces: TraceStore }>) {
  describe(`evaluation_drop cooldown per evaluation name: ${engine}`, () => {
    let registry: RegistryStore;
    let traceStore: TraceStore;
    beforeAll(async () => {
      ({ registry, traces: traceStore } = await open());
      await registry.importBundle(parseBundle(smallBundle()));
    });
    afterAll(async () => {
      await traceStore.close();
      await registry.close();
    });

    it('finds the real evaluation once in its cooldown under 19 made-up names a step', async () => {
      const s = registry.insights;
      await s.createSubscription(subscription('sub-drops', { kinds: ['evaluation_drop'] }));
      await s.setDetectionCursor('org-a', T0 - HOUR);
      // One run per step: nothing found earlier in the run is remembered, every cooldown is looked up.
      for (let h = 0; h < STEPS; h++)
        await runOrganization(
          {
            traces,
            evaluations,
            insights: s,
            state,
            bounds: { maxSteps: 1, subjectsPerCall: 200, maxSubjects: 2000, settleS: 0 },
            nowMs: (T0 + h * HOUR) * 1000,
          },
          'org-a',
        );
      expect(await s.detectionCursor('org-a')).toBe(T0 + (STEPS - 1) * HOUR);
      const all = await s.listInsights({
        orgId: 'org-a',
        workspaceIds: ['ws-a-team'],
        kinds: ['evaluation_drop'],
        limit: 10_000,
      });
      expect(all).toHaveLength(STEPS * (JUNK + 1) - (STEPS - 1));
      const victim = all.filter((i) => i.payload.evaluation_name === 'victim');
      expect(victim.map((i) => i.window_end_s - T0)).toEqual([0]);
      const delivered = (await drain(s, (T0 + STEPS * HOUR) * 1000)).filter((d) => d.insight_id === victim[0]?.id);
      expect(delivered).toHaveLength(1);
    });
  });
}

await onDetectionEngines('cooldown_details', 'evaluation_drop cooldown per evaluation name', T0, cooldownSuite);
