/**
 * One detection step (src/insights/detect.ts) over a real DuckDB trace store: the records it
 * builds (subject, window, payload, deterministic id), skills and agents alike, paging over
 * subjects and its bound, the cooldown, the hook for evaluation scores, and its passes over agents:
 * the registry's first, each resumed where the step before stopped at the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cooldowns, detectStep, insightId, type PagePositions, type StepDeps } from '../../src/insights/detect.ts';
import type { EvaluationFacts, EvaluationFactsReader, SubjectFactsReader } from '../../src/store/facts-port.ts';
import type { InsightRecord } from '../../src/store/insight-port.ts';
import { DEFAULT_SETTINGS, effectiveSettings } from '../../src/insights/settings.ts';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';

const T = Date.UTC(2026, 10, 1) / 1000; // a midnight: usage summaries are due
const HOUR = 3600;
const DAY = 86400;

/** 40 invocations of `skill` by agent-1 a day, over 8 days; the last day's take `slow` times as long. */
function spans(skill: string, first: number, slow: number): SpanRow[] {
  return Array.from({ length: 8 * 40 }, (_, i) => {
    const startS = T - 8 * DAY + Math.floor(i / 40) * DAY + (i % 40) * 600;
    return spanRow(first + i, {
      org_id: 'org-d',
      workspace_id: 'ws-d',
      category: 'skill_invocation',
      skill,
      agent: 'agent-1',
      start_s: startS,
      duration_ms: (1000 + (i % 10) * 10) * (startS >= T - DAY ? slow : 1),
      tokens: 100,
    });
  });
}

describe('a detection step over the trace store', () => {
  let store: DuckDbTraceStore;
  const deps = (fields: Partial<StepDeps> = {}): StepDeps => ({
    traces: store,
    settings: () => DEFAULT_SETTINGS,
    cooldowns: new Cooldowns(async () => null),
    subjectsPerCall: 200,
    maxSubjects: 1000,
    ...fields,
  });
  beforeAll(async () => {
    store = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    await store.insertSpans([...spans('sk-slow', 0, 3), ...spans('sk-same', 1000, 1), ...spans('sk-also', 2000, 1)]);
    await store.seal();
  });
  afterAll(async () => {
    await store.close();
  });

  it('finds a regression of a skill and of the agent running it, as records with deterministic ids', async () => {
    const { insights, examined, truncated } = await detectStep(deps(), 'org-d', T, '2026-11-01T00:00:05.000Z');
    expect({ examined, truncated }).toEqual({ examined: { skill: 3, agent: 1, evaluation: 0 }, truncated: false });
    const regressions = insights.filter((i) => i.kind === 'latency_regression');
    expect(regressions.map((i) => i.subject)).toEqual([
      { type: 'skill', id: 'sk-slow' },
      { type: 'agent', id: 'agent-1' },
    ]);
    const skill = regressions[0];
    expect(skill).toEqual({
      id: insightId(
        { orgId: 'org-d', workspaceId: 'ws-d', kind: 'latency_regression', subject: { type: 'skill', id: 'sk-slow' } },
        { startS: T - DAY, endS: T },
      ),
      org_id: 'org-d',
      workspace_id: 'ws-d',
      kind: 'latency_regression',
      subject: { type: 'skill', id: 'sk-slow' },
      window_start_s: T - DAY,
      window_end_s: T,
      payload: {
        kind: 'latency_regression',
        skill_id: 'sk-slow',
        window: { start_time_unix_seconds: T - DAY, end_time_unix_seconds: T },
        percentile: 'p90',
        current_ms: 3240,
        previous_ms: 1080,
        change_ratio: 3,
      },
      created_at: '2026-11-01T00:00:05.000Z',
    });
    expect(regressions[1]?.payload.agent_id).toBe('agent-1');
    expect(regressions[1]?.payload.skill_id).toBeUndefined();
    // The step ends a UTC day: a usage summary per subject of the day.
    expect(insights.filter((i) => i.kind === 'usage_summary').map((i) => i.subject.id)).toEqual([
      'sk-also',
      'sk-same',
      'sk-slow',
      'agent-1',
    ]);
    // Again, from nothing: the same records under the same ids.
    expect((await detectStep(deps(), 'org-d', T, '2026-11-01T00:00:05.000Z')).insights).toEqual(insights);
  });

  it('gives an insight of another window, kind, subject, workspace or organization another id', () => {
    const key = {
      orgId: 'o',
      workspaceId: 'w',
      kind: 'cost_spike' as const,
      subject: { type: 'skill' as const, id: 's' },
    };
    const w = { startS: 0, endS: DAY };
    const ids = new Set([
      insightId(key, w),
      insightId(key, { startS: HOUR, endS: DAY + HOUR }),
      insightId({ ...key, kind: 'latency_regression' }, w),
      insightId({ ...key, subject: { type: 'agent', id: 's' } }, w),
      insightId({ ...key, workspaceId: 'w2' }, w),
      insightId({ ...key, orgId: 'o2' }, w),
      insightId({ ...key, detail: 'relevance' }, w),
    ]);
    expect(ids.size).toBe(7);
    expect(insightId(key, w)).toMatch(/^ins_[0-9a-f]{32}$/);
  });

  it('finds a kind again only after its cooldown, which a workspace may set', async () => {
    const cooldowns = new Cooldowns(async () => null);
    const regressionsAt = async (step: number, c = cooldowns, settings = DEFAULT_SETTINGS) =>
      (await detectStep(deps({ cooldowns: c, settings: () => settings }), 'org-d', step, 'x')).insights.filter(
        (i) => i.kind === 'latency_regression',
      ).length;
    expect(await regressionsAt(T - 2 * HOUR)).toBe(2);
    expect(await regressionsAt(T - HOUR)).toBe(0);
    expect(await regressionsAt(T)).toBe(0);
    const short = effectiveSettings({ cooldown_hours: 1 }).settings;
    const c = new Cooldowns(async () => null);
    expect(await regressionsAt(T - HOUR, c, short)).toBe(2);
    expect(await regressionsAt(T, c, short)).toBe(2);
  });

  it('asks what was stored once per key and run, and a stored insight within the cooldown holds it', async () => {
    const asked: number[] = [];
    const cooldowns = new Cooldowns(async (_key, sinceS) => {
      asked.push(sinceS);
      return T - 3 * HOUR;
    });
    const found = await detectStep(deps({ cooldowns }), 'org-d', T - 2 * HOUR, 'x');
    expect(found.insights.filter((i) => i.kind === 'latency_regression')).toEqual([]);
    await detectStep(deps({ cooldowns }), 'org-d', T - HOUR, 'x');
    expect(asked).toEqual([T - 2 * HOUR - DAY, T - 2 * HOUR - DAY]);
  });

  it('reads subjects a page at a time, and no more than its bound per step', async () => {
    const whole = await detectStep(deps(), 'org-d', T, 'x');
    const paged = await detectStep(deps({ subjectsPerCall: 1 }), 'org-d', T, 'x');
    expect(paged.insights).toEqual(whole.insights);
    const bounded = await detectStep(deps({ subjectsPerCall: 1, maxSubjects: 2 }), 'org-d', T, 'x');
    expect(bounded.examined.skill).toBe(2);
    expect(bounded.truncated).toBe(true);
    expect(bounded.insights.filter((i) => i.subject.type === 'skill').map((i) => i.subject.id)).toEqual([
      'sk-also',
      'sk-same',
    ]);
  });

  it('finds evaluation drops from a reader of evaluation scores, one per evaluation name', async () => {
    const score = (window: number, evaluationName: string, meanScore: number): EvaluationFacts => ({
      window,
      workspaceId: 'ws-d',
      subject: 'agent-1',
      evaluationName,
      meanScore,
      samples: 40,
    });
    const evaluations: EvaluationFactsReader = {
      evaluationFacts: async (q) => ({
        rows:
          q.subjectType === 'agent'
            ? [score(0, 'relevance', 0.5), score(1, 'relevance', 0.9), score(0, 'tone', 0.1), score(1, 'tone', 0.8)]
            : [],
        subjects: q.subjectType === 'agent' ? 1 : 0,
        next: null,
      }),
    };
    const { insights, examined } = await detectStep(deps({ evaluations }), 'org-d', T, 'x');
    const drops = insights.filter((i) => i.kind === 'evaluation_drop');
    expect(drops.map((i) => [i.subject.id, i.payload.evaluation_name])).toEqual([
      ['agent-1', 'relevance'],
      ['agent-1', 'tone'],
    ]);
    expect(new Set(drops.map((i) => i.id)).size).toBe(2);
    expect(examined.evaluation).toBe(1);
  });
});

describe("a detection step's passes over agents", () => {
  let store: DuckDbTraceStore;
  /** The agent subjects of each page read, in order, per step. */
  let pages: string[][];
  const reader: SubjectFactsReader = {
    activeOrganizations: (sinceS, limit) => store.activeOrganizations(sinceS, limit),
    firstSpanS: (orgId, sinceS) => store.firstSpanS(orgId, sinceS),
    subjectFacts: async (q, signal) => {
      const page = await store.subjectFacts(q, signal);
      if (q.subjectType === 'agent') pages.push([...new Set(page.rows.map((r) => r.subject))]);
      return page;
    },
  };
  const deps = (fields: Partial<StepDeps> = {}): StepDeps => ({
    traces: reader,
    settings: () => DEFAULT_SETTINGS,
    cooldowns: new Cooldowns(async () => null),
    subjectsPerCall: 10,
    maxSubjects: 20,
    ...fields,
  });
  const regressed = (insights: InsightRecord[]) =>
    insights.filter((i) => i.kind === 'latency_regression' && i.subject.type === 'agent').map((i) => i.subject.id);
  const junk = Array.from({ length: 50 }, (_, i) => `aaaa-${String(i + 1).padStart(4, '0')}`);

  beforeAll(async () => {
    store = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    const slowAgent = (agent: string, first: number) =>
      spans('sk-slow', first, 3).map((s) => ({ ...s, org_id: 'org-j', workspace_id: 'ws-j', agent }));
    // 50 names as sent, one span each in the current window, sorting before every real agent.
    const made = junk.map((agent, i) =>
      spanRow(20_000 + i, { org_id: 'org-j', workspace_id: 'ws-j', agent, start_s: T - HOUR }),
    );
    await store.insertSpans([...slowAgent('zz-registry', 10_000), ...slowAgent('zz-named', 11_000), ...made]);
  });
  afterAll(async () => {
    await store.close();
  });

  it("reads the organization's registry agents before the names as sent, whatever their order", async () => {
    pages = [];
    const alone = await detectStep(deps(), 'org-j', T, 'x');
    // Without the registry's list, the bound is spent on the first 20 names by code point.
    expect([alone.examined.agent, alone.truncated, regressed(alone.insights)]).toEqual([20, true, []]);
    pages = [];
    const first = await detectStep(deps({ registryAgents: ['zz-registry', 'zz-gone'] }), 'org-j', T, 'x');
    expect([first.examined.agent, first.truncated, regressed(first.insights)]).toEqual([20, true, ['zz-registry']]);
    expect(pages).toEqual([['zz-registry'], junk.slice(0, 10), junk.slice(10, 19)]);
    expect(first.positions).toEqual({ 'agent:named': 'aaaa-0019' });
  });

  it('resumes each pass where the step before stopped at the bound, and starts over after the last', async () => {
    const registryAgents = ['zz-registry'];
    let positions: PagePositions = {};
    const steps: { named: string[]; regressed: string[]; truncated: boolean; positions: PagePositions }[] = [];
    for (let step = 0; step < 4; step++) {
      pages = [];
      const r = await detectStep(deps({ registryAgents, positions }), 'org-j', T, 'x');
      const named = pages.flat().filter((a) => a !== 'zz-registry');
      steps.push({ named, regressed: regressed(r.insights), truncated: r.truncated, positions: r.positions });
      positions = r.positions;
    }
    // 51 names as sent, 19 a step beside the registry's agent: every one in three steps, then again from the first.
    expect(steps.map((s) => [s.named.length, s.truncated, s.positions])).toEqual([
      [19, true, { 'agent:named': 'aaaa-0019' }],
      [19, true, { 'agent:named': 'aaaa-0038' }],
      [13, false, {}],
      [19, true, { 'agent:named': 'aaaa-0019' }],
    ]);
    expect(steps.slice(0, 3).flatMap((s) => s.named)).toEqual([...junk, 'zz-named']);
    expect(steps.map((s) => s.regressed)).toEqual([
      ['zz-registry'],
      ['zz-registry'],
      ['zz-registry', 'zz-named'],
      ['zz-registry'],
    ]);
  });

  it('resumes a pass of registry agents too, when they alone are more than the bound', async () => {
    const registryAgents = junk.slice(0, 30);
    pages = [];
    const first = await detectStep(deps({ registryAgents }), 'org-j', T, 'x');
    expect([pages.flat().length, first.positions]).toEqual([20, { 'agent:registry': 'aaaa-0020' }]);
    pages = [];
    const second = await detectStep(deps({ registryAgents, positions: first.positions }), 'org-j', T, 'x');
    // The registry's last 10, then 10 names as sent.
    expect(pages.flat()).toEqual([...junk.slice(20, 40)]);
    expect(second.positions).toEqual({ 'agent:named': 'aaaa-0040' });
  });
});
