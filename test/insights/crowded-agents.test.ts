/**
 * Insight detection when one sender crowds an organization with made-up agent names (the abusive
 * case of docs/insights.md "Subjects read in passes"), over the real stores of each mode: 5,000
 * names as sent ("aaaa-0001".."aaaa-5000", sorting before every real id) against a bound of 2,000
 * agents a step. The registry's agents are read first, so a planted regression of one is found in
 * the same run; the names as sent are read from where the step before stopped (positions kept in
 * the registry store between runs), so one past the bound is found when its turn comes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { DetectionConfig } from '../../src/config-detection.ts';
import { startDetection } from '../../src/insights/scheduler.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { SpanRow, TraceStore } from '../../src/store/trace-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { onDetectionEngines } from '../helpers/detection-engines.ts';

const END = Date.UTC(2026, 10, 1, 12) / 1000;
const HOUR = 3600;
const DAY = 86400;
const JUNK = 5000;
const CONFIG: DetectionConfig = {
  enabled: false,
  intervalMs: 60_000,
  maxSteps: 1,
  subjectsPerCall: 200,
  maxSubjects: 2000,
  settleS: 600,
};

/** 40 spans a day (one each 36 minutes) of `agent` in org-a's team workspace over 8 days; `slow`: the last day's take three times as long. */
function agentSpans(agent: string, first: number, slow: boolean): SpanRow[] {
  return Array.from({ length: 8 * 40 }, (_, i) => {
    const startS = END - 8 * DAY + Math.floor(i / 40) * DAY + (i % 40) * 2160;
    return spanRow(first + i, {
      category: 'skill_invocation',
      skill: 'sk-1',
      agent,
      start_s: startS,
      duration_ms: (1000 + (i % 10) * 10) * (slow && startS >= END - DAY ? 3 : 1),
    });
  });
}

/** One span each of 5,000 made-up names, in the current window. */
const junk = () =>
  Array.from({ length: JUNK }, (_, i) =>
    spanRow(100_000 + i, { agent: `aaaa-${String(i + 1).padStart(4, '0')}`, start_s: END - HOUR - (i % 600) }),
  );

function crowdedSuite(engine: string, open: () => Promise<{ registry: RegistryStore; traces: TraceStore }>) {
  describe(`detection with thousands of made-up agent names: ${engine}`, () => {
    let registry: RegistryStore;
    let traces: TraceStore;
    let nowMs = (END + HOUR) * 1000;
    const run = async () =>
      (
        await startDetection({
          traces,
          evaluations: traces,
          insights: registry.insights,
          state: registry.detection,
          config: CONFIG,
          log: { info: () => undefined, warn: () => undefined },
          now: () => nowMs,
        }).runOnce()
      ).orgs.find((o) => o.orgId === 'org-a');
    const regressedAgents = async () =>
      (
        await registry.insights.listInsights({
          orgId: 'org-a',
          workspaceIds: ['ws-a-team'],
          kinds: ['latency_regression'],
          limit: 100,
        })
      )
        .filter((i) => i.subject.type === 'agent')
        .map((i) => `${i.subject.id} ${i.window_end_s - END}`)
        .sort();

    beforeAll(async () => {
      ({ registry, traces } = await open());
      await registry.importBundle(parseBundle(smallBundle()));
      // ag-1 and ag-2 are registry agents (ag-1 regresses); zz-named is a name as sent that regresses too.
      await traces.insertSpans([
        ...agentSpans('ag-1', 0, true),
        ...agentSpans('ag-2', 1000, false),
        ...agentSpans('zz-named', 2000, true),
        ...junk(),
      ]);
    });
    afterAll(async () => {
      await traces.close();
      await registry.close();
    });

    it("finds a registry agent's regression in the same run, the names as sent past the bound", async () => {
      const first = await run();
      expect([first?.steps, first?.truncatedSteps, first?.examined.agent]).toEqual([1, 1, 2000]);
      expect(await regressedAgents()).toEqual(['ag-1 0']);
      // ag-1, ag-2, then the first 1,998 names as sent: the next step resumes after the last.
      expect(await registry.detection.pagePositions('org-a')).toEqual({ 'agent:named': 'aaaa-1998' });
    });

    it('reads the names as sent from where the step before stopped, each in turn, then from the first', async () => {
      const positions: Record<string, string>[] = [];
      for (let step = 2; step <= 4; step++) {
        nowMs += HOUR * 1000;
        const next = await run();
        expect([next?.steps, next?.examined.agent]).toEqual([1, step === 3 ? 1007 : 2000]);
        positions.push(await registry.detection.pagePositions('org-a'));
      }
      // 5,001 names as sent at 1,998 a step: the third step reaches zz-named, the last, and the fourth starts over.
      expect(positions).toEqual([{ 'agent:named': 'aaaa-3996' }, {}, { 'agent:named': 'aaaa-1998' }]);
      expect(await regressedAgents()).toEqual(['ag-1 0', 'zz-named 7200']);
    });
  });
}

await onDetectionEngines('crowded', 'detection with thousands of made-up agent names', END, crowdedSuite);
