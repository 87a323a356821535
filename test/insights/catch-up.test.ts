/**
 * Catching up after a silence (docs/insights.md "The schedule"), over the real stores of each
 * mode: every rule needs the subject's spans in the step's current window, so a run starts at the
 * step after the organization's first span since its cursor's next window began, not at each silent
 * hour in turn; a step whose window holds a span is never skipped, and an organization with no
 * span since has its cursor moved to the latest step with none computed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOrganization } from '../../src/insights/run-organization.ts';
import type { SubjectFactsReader } from '../../src/store/facts-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { onDetectionEngines } from '../helpers/detection-engines.ts';

const HOUR = 3600;
const DAY = 86400;
const END = Date.UTC(2026, 10, 1, 12) / 1000;
/** Where every organization's cursor stands: ten days before the latest step. */
const CURSOR = END - 10 * DAY;
const BOUNDS = { maxSteps: 24, subjectsPerCall: 200, maxSubjects: 2000, settleS: 900 };
const NOW_MS = (END + 900 + 60) * 1000;

/**
 * org-a: spans long before the cursor, then silent until END - 4.5 h; org-b: a span an hour before
 * the cursor (in the current window of the step after it), then the same silence; org-c: only
 * the spans long before.
 */
const spans = [
  ...['org-a', 'org-b', 'org-c'].map((org_id, i) => spanRow(i + 1, { org_id, start_s: CURSOR - 9 * DAY })),
  spanRow(10, { org_id: 'org-a', skill: 'sk-1', category: 'skill_invocation', start_s: END - 4 * HOUR - 1800 }),
  spanRow(11, { org_id: 'org-b', start_s: CURSOR - HOUR }),
  spanRow(12, { org_id: 'org-b', skill: 'sk-1', category: 'skill_invocation', start_s: END - 4 * HOUR - 1800 }),
];

function catchUpSuite(engine: string, open: () => Promise<{ registry: RegistryStore; traces: TraceStore }>) {
  describe(`catching up after a silence: ${engine}`, () => {
    let registry: RegistryStore;
    let traces: TraceStore;
    /** The steps computed, relative to END in hours, per organization. */
    const computed = new Map<string, number[]>();
    const run = (orgId: string) => {
      const reader: SubjectFactsReader = {
        activeOrganizations: (sinceS, limit) => traces.activeOrganizations(sinceS, limit),
        firstSpanS: (org, sinceS) => traces.firstSpanS(org, sinceS),
        subjectFacts: (q, signal) => {
          const step = ((q.windows[0]?.endS ?? 0) - END) / HOUR;
          if (q.subjectType === 'skill') computed.set(q.orgId, [...(computed.get(q.orgId) ?? []), step]);
          return traces.subjectFacts(q, signal);
        },
      };
      const deps = { traces: reader, insights: registry.insights, state: registry.detection, bounds: BOUNDS };
      return runOrganization({ ...deps, evaluations: traces, nowMs: NOW_MS }, orgId);
    };
    beforeAll(async () => {
      ({ registry, traces } = await open());
      await traces.insertSpans(spans);
      for (const org of ['org-a', 'org-b', 'org-c']) await registry.insights.setDetectionCursor(org, CURSOR);
    });
    afterAll(async () => {
      await traces.close();
      await registry.close();
    });

    it('answers the first span of an organization at or after a time', async () => {
      expect(await traces.firstSpanS('org-a', CURSOR - DAY)).toBe(END - 4 * HOUR - 1800);
      expect(await traces.firstSpanS('org-b', CURSOR - DAY)).toBe(CURSOR - HOUR);
      expect(await traces.firstSpanS('org-b', CURSOR - HOUR + 1)).toBe(END - 4 * HOUR - 1800);
      expect(await traces.firstSpanS('org-c', CURSOR - DAY)).toBeNull();
      expect(await traces.firstSpanS('org-z', 0)).toBeNull();
    });

    it('starts at the step after the first span since, not at each silent hour', async () => {
      const a = await run('org-a');
      expect(computed.get('org-a')).toEqual([-4, -3, -2, -1, 0]);
      expect([a.steps, a.cursorS, await registry.insights.detectionCursor('org-a')]).toEqual([5, END, END]);
    });

    it('skips no step whose current window holds a span, then skips the silence at the next run', async () => {
      const first = await run('org-b');
      const after = (CURSOR - END) / HOUR;
      expect(computed.get('org-b')).toEqual(Array.from({ length: 24 }, (_, i) => after + 1 + i));
      expect(first.cursorS).toBe(CURSOR + 24 * HOUR);
      computed.delete('org-b');
      const second = await run('org-b');
      expect(computed.get('org-b')).toEqual([-4, -3, -2, -1, 0]);
      expect(second.cursorS).toBe(END);
    });

    it('moves the cursor of an organization with no span since to the latest step, none computed', async () => {
      const c = await run('org-c');
      expect(computed.get('org-c')).toBeUndefined();
      expect([c.steps, c.cursorS, await registry.insights.detectionCursor('org-c')]).toEqual([0, END, END]);
      // Up to date: nothing asked, nothing moved.
      expect((await run('org-c')).cursorS).toBe(END);
    });
  });
}

await onDetectionEngines('catch_up', 'catching up after a silence', END, catchUpSuite);
