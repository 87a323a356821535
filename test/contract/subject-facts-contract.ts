/**
 * Detection's facts (TraceStore.subjectFacts) on every engine: per span workspace and subject, the
 * numbers of several windows, equal to facts-reference.ts's over the same spans and to operation
 * 1's answer (`aggregate`) for the same subject, range and workspace. The data: the trace
 * contract's generated spans (skills sk-a, sk-b, sk-c; agents on three of four spans) and
 * hand-made traces for the edges: one trace of two skills and two versions, an agent named in one
 * workspace of a trace that spans two, subjects whose code-point order is not a locale's, tool
 * calls without a tool, and invocations stored after the rest of their traces (late mappings).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBJECT_FACT_LIST, type SubjectFactsQuery, type SubjectFacts } from '../../src/store/facts-port.ts';
import type { SpanRow, TraceStore } from '../../src/store/trace-port.ts';
import { spanRow, toolCallRow } from '../fixtures/span-row.ts';
import { END, generated, type ContractOptions } from './trace-contract.ts';
import { expectSameFacts, subjectFactsReference } from './facts-reference.ts';

const DAY = 86400;

/** Edge traces of org-1 (ids 0xe000…); `late`: the invocations, stored after everything else. */
function edgeTraces(): { spans: SpanRow[]; late: SpanRow[] } {
  const at = (n: number, trace: number, fields: Partial<SpanRow>) =>
    spanRow(0xe000 + n, {
      org_id: 'org-1',
      workspace_id: 'ws-1',
      trace_id: (0xe000 + trace).toString(16).padStart(32, 'e'),
      start_s: END - DAY / 2 - n * 60,
      ...fields,
    });
  const invocation = (skill: string, version = 1): Partial<SpanRow> => ({
    category: 'skill_invocation',
    skill,
    skill_version: version,
    duration_ms: 100 + skill.length * 10 + version,
  });
  const spans = [
    // One trace, two skills (one in two versions): its spans count once for each skill.
    at(0, 0, invocation('sk-a', 1)),
    at(1, 0, invocation('sk-a', 2)),
    at(2, 0, invocation('sk-b')),
    at(3, 0, { category: 'model_call', model: 'gpt-4o', tokens: 500, cost: 0.25 }),
    // An agent named in ws-1 only; the trace's span in ws-2 is not the agent's for ws-2.
    at(4, 1, { agent: 'agent-x', duration_ms: 70 }),
    at(5, 1, { workspace_id: 'ws-2', category: 'model_call', model: 'claude-sonnet-4', tokens: 80, cost: 0.5 }),
    at(6, 2, { workspace_id: 'ws-2', agent: 'agent-x', category: 'model_call', model: 'gpt-4o', cost: 0.125 }),
    // Subjects ordered by code point: 'B-skill' < 'a-skill' < 'é-skill' (a locale puts a before B).
    ...['a-skill', 'B-skill', 'é-skill'].map((skill, i) => at(7 + i, 3 + i, invocation(skill))),
    // Tool calls of sk-c's trace, one without a tool name, some erroring.
    at(10, 6, invocation('sk-c', 3)),
    ...Array.from({ length: 6 }, (_, i) =>
      toolCallRow(0xe100 + i, i % 3 === 0 ? 'fetch' : 'lookup', i === 5 ? null : 'srv-1', {
        org_id: 'org-1',
        workspace_id: 'ws-1',
        trace_id: (0xe000 + 6).toString(16).padStart(32, 'e'),
        start_s: END - DAY / 2,
        is_error: i % 2 === 0,
      }),
    ),
    toolCallRow(0xe106, 'anon', null, {
      org_id: 'org-1',
      workspace_id: 'ws-1',
      trace_id: (0xe000 + 6).toString(16).padStart(32, 'e'),
      start_s: END - DAY / 2,
      tool: null,
    }),
    at(11, 7, { category: 'model_call', model: 'gpt-4o-mini', tokens: 40, cost: 0.01, user: 'late-user' }),
  ];
  // sk-late's invocation arrives after the rest of its trace was stored (and sealed, in some runs).
  const late = [at(12, 7, { ...invocation('sk-late'), is_error: true })];
  return { spans, late };
}

const WINDOWS = [
  { startS: END - DAY, endS: END },
  { startS: END - 8 * DAY, endS: END - DAY },
  { startS: END - 40 * DAY, endS: END },
  { startS: END - 3 * DAY, endS: END - 2 * DAY },
];

function factsQuery(fields: Partial<SubjectFactsQuery> = {}): SubjectFactsQuery {
  return { orgId: 'org-1', subjectType: 'skill', windows: WINDOWS, limit: 1000, after: null, ...fields };
}

export function subjectFactsContract(
  engine: string,
  open: () => Promise<TraceStore>,
  options: ContractOptions = {},
): void {
  describe(`trace store contract, detection's facts: ${engine}`, () => {
    let store: TraceStore;
    const edges = edgeTraces();
    const spans = [...generated(), ...edges.spans, ...edges.late];
    const loaded = [...generated(), ...edges.spans];

    beforeAll(async () => {
      store = await open();
      for (let i = 0; i < loaded.length; i += 1000) {
        await store.insertSpans(loaded.slice(i, i + 1000));
        await options.afterChunk?.(store, i / 1000);
      }
      await store.insertSpans(edges.late);
    });
    afterAll(async () => {
      await store.close();
    });

    const same = async (q: SubjectFactsQuery) =>
      expectSameFacts(await store.subjectFacts(q), subjectFactsReference(spans, q));

    it("answers every skill's numbers per workspace and window", async () => {
      const page = await store.subjectFacts(factsQuery());
      expect(page.subjects).toBe(7);
      expect(page.next).toBeNull();
      expect([...new Set(page.rows.map((r) => r.subject))]).toEqual([
        'B-skill',
        'a-skill',
        'sk-a',
        'sk-b',
        'sk-c',
        'sk-late',
        'é-skill',
      ]);
      await same(factsQuery());
    });

    it("answers every agent's numbers, an agent's traces per workspace of the spans naming it", async () => {
      const page = await store.subjectFacts(factsQuery({ subjectType: 'agent' }));
      const x = page.rows.filter((r) => r.subject === 'agent-x' && r.window === 0);
      // ws-1: the root naming it (the span of ws-2 is not counted there); ws-2: the span naming it only.
      expect(x.map((r) => [r.workspaceId, r.traces, r.cost])).toEqual([
        ['ws-1', 1, 0],
        ['ws-2', 1, 0.125],
      ]);
      await same(factsQuery({ subjectType: 'agent' }));
    });

    it('pages over subjects by code point, the cursor being the last subject answered', async () => {
      for (const subjectType of ['skill', 'agent'] as const) {
        const whole = await store.subjectFacts(factsQuery({ subjectType }));
        const rows: SubjectFacts[] = [];
        let after: string | null = null;
        let calls = 0;
        do {
          const page = await store.subjectFacts(factsQuery({ subjectType, limit: 3, after }));
          expectSameFacts(page, subjectFactsReference(spans, factsQuery({ subjectType, limit: 3, after })));
          expect(page.subjects).toBeLessThanOrEqual(3);
          rows.push(...page.rows);
          after = page.next;
          calls++;
        } while (after !== null);
        expect(calls).toBe(Math.floor(whole.subjects / 3) + 1);
        expectSameFacts({ ...whole, rows }, whole);
      }
    });

    it('pages over the subjects `only` names, or all but those `except` names, the two making the whole', async () => {
      const named = ['agent-0002', 'agent-x', 'no-such-agent'];
      const whole = await store.subjectFacts(factsQuery({ subjectType: 'agent' }));
      const chosen: SubjectFacts[] = [];
      for (const choice of [{ only: named }, { except: named }]) {
        let after: string | null = null;
        do {
          const q = factsQuery({ subjectType: 'agent', limit: 1, after, ...choice });
          const page = await store.subjectFacts(q);
          expectSameFacts(page, subjectFactsReference(spans, q));
          chosen.push(...page.rows);
          after = page.next;
        } while (after !== null);
      }
      expect([...new Set(chosen.map((r) => r.subject))]).toEqual(['agent-0002', 'agent-x', 'agent-0001', 'planner']);
      const key = (r: SubjectFacts) => JSON.stringify([r.subject, r.workspaceId, r.window, r.traces]);
      expect(chosen.map(key).sort()).toEqual(whole.rows.map(key).sort());
      // Both at once: the subjects of `only` that `except` leaves; an empty `only` chooses none.
      const both = factsQuery({ subjectType: 'agent', only: named, except: ['agent-x'] });
      expect([...new Set((await store.subjectFacts(both)).rows.map((r) => r.subject))]).toEqual(['agent-0002']);
      await same(both);
      expect(await store.subjectFacts(factsQuery({ only: [] }))).toEqual({ rows: [], subjects: 0, next: null });
      await same(factsQuery({ except: [] }));
    });

    it('keeps the top tools and models of each row', async () => {
      const q = factsQuery({ topTools: 1, topModels: 2 });
      const page = await store.subjectFacts(q);
      expect(Math.max(...page.rows.map((r) => r.tools.length))).toBe(1);
      expect(Math.max(...page.rows.map((r) => r.models.length))).toBe(2);
      const c = page.rows.find((r) => r.subject === 'sk-c' && r.window === 0 && r.workspaceId === 'ws-1');
      expect(c?.tools[0]?.errors).toBeGreaterThanOrEqual(2);
      await same(q);
      await same(factsQuery({ topTools: 0, topModels: 0 }));
    });

    it("agrees with operation 1's answer for the same subject, range and workspace", async () => {
      for (const subjectType of ['skill', 'agent'] as const) {
        const page = await store.subjectFacts(factsQuery({ subjectType }));
        expect(page.rows.length).toBeGreaterThan(10);
        for (const r of page.rows) {
          const w = WINDOWS[r.window] as (typeof WINDOWS)[number];
          const base = {
            orgId: 'org-1',
            subject: subjectType === 'skill' ? { skill: r.subject } : { agent: r.subject },
            startS: w.startS,
            endS: w.endS,
            workspaceIds: [r.workspaceId],
            filters: [],
          };
          const [row] = await store.aggregate({
            ...base,
            groupBy: [],
            measures: [
              'traces',
              'sessions',
              'active_users',
              'skill_invocations',
              'error_rate',
              'tokens',
              'cost',
              'latency_p50',
              'latency_p90',
              'latency_p99',
              'tokens_per_trace',
              'success_rate',
            ],
          });
          const v = row?.values ?? {};
          const what = `${r.subject} ${r.workspaceId} ${r.window}`;
          expect(
            [r.traces, r.sessions, r.activeUsers, r.invocations, r.tokens, r.latencyP50, r.latencyP90, r.latencyP99],
            what,
          ).toEqual([
            v.traces,
            v.sessions,
            v.active_users,
            v.skill_invocations,
            v.tokens,
            v.latency_p50,
            v.latency_p90,
            v.latency_p99,
          ]);
          expect(r.errors, what).toBe(Math.round((v.error_rate ?? 0) * (v.skill_invocations ?? 0)));
          expect(r.cost).toBeCloseTo(v.cost ?? 0, 9);
          expect(r.tokensPerTrace).toBe(v.tokens_per_trace);
          expect(r.successRate).toBe(v.success_rate);
          const models = await store.aggregate({ ...base, groupBy: ['model'], measures: ['cost'] });
          for (const m of r.models)
            expect(m.cost, `${what} ${m.model}`).toBeCloseTo(
              models.find((x) => x.groups.model === m.model)?.values.cost ?? -1,
              9,
            );
          const tools = await store.aggregate({ ...base, groupBy: ['tool', 'mcp'], measures: ['tool_calls'] });
          for (const t of r.tools)
            expect(t.calls, `${what} ${t.tool}`).toBe(
              tools.find((x) => x.groups.tool === t.tool && x.groups.mcp === t.mcp)?.values.tool_calls,
            );
        }
      }
    });

    it('never answers another organization, and nothing for one without spans', async () => {
      const org2 = factsQuery({ orgId: 'org-2' });
      const page = await store.subjectFacts(org2);
      expect(page.rows.map((r) => r.workspaceId).every((w) => w === 'ws-9')).toBe(true);
      await same(org2);
      expect(await store.subjectFacts(factsQuery({ orgId: 'org-none' }))).toEqual({
        rows: [],
        subjects: 0,
        next: null,
      });
      expect(await store.activeOrganizations(END - 40 * DAY, 10)).toEqual(['org-1', 'org-2']);
      expect(await store.activeOrganizations(END - 40 * DAY, 1)).toEqual(['org-1']);
      expect(await store.activeOrganizations(END + DAY, 10)).toEqual([]);
    });

    it("answers an organization's first span since a time, as the spans it holds", async () => {
      const first = (orgId: string, sinceS: number) => {
        const starts = spans.filter((s) => s.org_id === orgId && s.start_s >= sinceS).map((s) => s.start_s);
        return starts.length === 0 ? null : Math.min(...starts);
      };
      for (const orgId of ['org-1', 'org-2', 'org-none'])
        for (const sinceS of [END - 40 * DAY, END - DAY / 2, END - DAY / 2 + 1, END + DAY]) {
          const expected = first(orgId, sinceS);
          expect(await store.firstSpanS(orgId, sinceS), `${orgId} since ${sinceS}`).toBe(expected);
        }
      expect(first('org-1', END - 40 * DAY)).toBeTypeOf('number');
      expect(first('org-2', END - 40 * DAY)).toBeTypeOf('number');
    });

    it('refuses a query outside its bounds, and one whose signal is aborted', async () => {
      await expect(store.subjectFacts(factsQuery({ windows: [] }))).rejects.toThrow(/windows/);
      await expect(store.subjectFacts(factsQuery({ limit: 0 }))).rejects.toThrow(/limit/);
      await expect(store.subjectFacts(factsQuery({ windows: [{ startS: END, endS: END }] }))).rejects.toThrow(/window/);
      const many = Array.from({ length: SUBJECT_FACT_LIST + 1 }, (_, i) => `agent-${i}`);
      await expect(store.subjectFacts(factsQuery({ except: many }))).rejects.toThrow(/at most 10000 subjects/);
      const controller = new AbortController();
      controller.abort();
      await expect(store.subjectFacts(factsQuery(), controller.signal)).rejects.toThrow();
    });
  });
}
