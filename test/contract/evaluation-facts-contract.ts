/**
 * Detection's evaluation scores (TraceStore.evaluationFacts) on every engine: per span workspace,
 * subject and evaluation name, the mean score and count of several windows, equal to
 * facts-reference.ts's over the same spans and evaluations and to operation 1's
 * `evaluation_score` (grouped by `evaluation`) for the same subject, range and workspace. The data:
 * the trace contract's generated spans with evaluations of a third of them (five names, some
 * label-only, some a day after their span, so in another window than it), and decoys that must
 * never count: another organization, a workspace without the trace's spans, a trace no span has, a
 * time before every window. Edges: a trace of sk-edge and agent-x across ws-1 and ws-2, evaluated
 * in both (agent-x is named in ws-1 only), and a subject whose traces have no evaluation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationRow } from '../../src/store/evaluation-row.ts';
import type { EvaluationFactsQuery, EvaluationFacts } from '../../src/store/facts-port.ts';
import type { SpanRow, TraceStore } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { END, generated, type ContractOptions } from './trace-contract.ts';
import { evaluationFactsReference, expectSameEvaluationFacts } from './facts-reference.ts';

const DAY = 86400;
const NAMES = ['relevance', 'groundedness', 'tone', "x' OR '1'='1", 'é-score'];

/** Edge traces of org-1 (ids 0xf000…): one of sk-edge and agent-x across ws-1 and ws-2; one of sk-quiet. */
function edgeSpans(): SpanRow[] {
  const at = (n: number, trace: number, fields: Partial<SpanRow>) =>
    spanRow(0xf000 + n, {
      org_id: 'org-1',
      workspace_id: 'ws-1',
      trace_id: (0xf000 + trace).toString(16).padStart(32, 'f'),
      start_s: END - DAY / 2 - n * 60,
      ...fields,
    });
  return [
    at(0, 0, { category: 'skill_invocation', skill: 'sk-edge', agent: 'agent-x', duration_ms: 90 }),
    at(1, 0, { workspace_id: 'ws-2', category: 'model_call', model: 'gpt-4o', tokens: 10 }),
    at(2, 1, { category: 'skill_invocation', skill: 'sk-quiet', duration_ms: 40 }),
  ];
}

/** Evaluations of every third of `spans`, with the decoys listed above, and of the edge trace. */
function evaluationsOf(spans: readonly SpanRow[]): EvaluationRow[] {
  const out: EvaluationRow[] = [];
  const at = (s: SpanRow, key: string, n: number, i: number, extra: Partial<EvaluationRow> = {}): EvaluationRow => ({
    org_id: s.org_id,
    workspace_id: s.workspace_id,
    key,
    trace_id: s.trace_id,
    span_id: s.span_id,
    response_id: null,
    name: NAMES[n % NAMES.length] as string,
    score: ((i * 37 + n * 11) % 101) / 20 - 1,
    label: null,
    passed: null,
    explanation: null,
    time_s: s.start_s + 30 + 60 * (n % 3),
    ...extra,
  });
  spans.forEach((s, i) => {
    if (i % 3 !== 0 || s.org_id !== 'org-1') return;
    const e = (n: number, extra: Partial<EvaluationRow> = {}) => out.push(at(s, `e-${i}-${n}`, i + n, i, extra));
    e(0);
    if (i % 2 === 0) e(1);
    if (i % 4 === 0) e(2, { score: null, label: 'pass', passed: true });
    if (i % 5 === 0) e(3, { time_s: s.start_s + DAY });
    if (i % 7 === 0) e(4, { workspace_id: 'ws-elsewhere', score: 900 });
    if (i % 9 === 0) e(5, { org_id: 'org-decoy', score: 900 });
    if (i % 11 === 0) e(6, { trace_id: i.toString(16).padStart(8, '0').padEnd(32, 'e'), score: 900 });
    if (i % 13 === 0) e(7, { time_s: s.start_s - 400 * DAY, score: 900 });
  });
  const [sk, ws2] = edgeSpans();
  out.push(at(sk as SpanRow, 'edge-1', 0, 0, { score: 0.25 }), at(ws2 as SpanRow, 'edge-2', 0, 0, { score: 0.75 }));
  return out;
}

const WINDOWS = [
  { startS: END - DAY, endS: END },
  { startS: END - 8 * DAY, endS: END - DAY },
  { startS: END - 40 * DAY, endS: END },
  { startS: END - 3 * DAY, endS: END - 2 * DAY },
];

function query(fields: Partial<EvaluationFactsQuery> = {}): EvaluationFactsQuery {
  return { orgId: 'org-1', subjectType: 'skill', windows: WINDOWS, limit: 1000, after: null, ...fields };
}

export function evaluationFactsContract(
  engine: string,
  open: () => Promise<TraceStore>,
  options: ContractOptions = {},
): void {
  describe(`trace store contract, detection's evaluation scores: ${engine}`, () => {
    let store: TraceStore;
    const spans = [...generated(), ...edgeSpans()];
    const evaluations = evaluationsOf(generated());
    const same = async (q: EvaluationFactsQuery) =>
      expectSameEvaluationFacts(await store.evaluationFacts(q), evaluationFactsReference(spans, evaluations, q));

    beforeAll(async () => {
      store = await open();
      const chunks = Math.ceil(spans.length / 1000);
      const perChunk = Math.ceil(evaluations.length / chunks);
      for (let c = 0; c < chunks; c++) {
        // A chunk's evaluations go with spans before them, or before their spans.
        await store.insertEvaluations(evaluations.slice(c * perChunk, (c + 1) * perChunk));
        await store.insertSpans(spans.slice(c * 1000, (c + 1) * 1000));
        await options.afterChunk?.(store, c);
      }
    });
    afterAll(async () => {
      await store.close();
    });

    it("answers every skill's mean scores per workspace, name and window", async () => {
      const page = await store.evaluationFacts(query());
      expect([page.subjects, page.next]).toEqual([4, null]);
      expect([...new Set(page.rows.map((r) => r.subject))]).toEqual(['sk-a', 'sk-b', 'sk-c', 'sk-edge']);
      expect(new Set(page.rows.map((r) => r.evaluationName))).toEqual(new Set(NAMES));
      expect(page.rows.every((r) => r.samples > 0 && Math.abs(r.meanScore) < 10)).toBe(true);
      // The edge trace: sk-edge's in ws-1 and in ws-2, each with its workspace's evaluation only.
      const edge = page.rows.filter((r) => r.subject === 'sk-edge');
      expect(edge.map((r) => [r.workspaceId, r.window, r.evaluationName, r.meanScore, r.samples])).toEqual([
        ['ws-1', 0, 'relevance', 0.25, 1],
        ['ws-1', 2, 'relevance', 0.25, 1],
        ['ws-2', 0, 'relevance', 0.75, 1],
        ['ws-2', 2, 'relevance', 0.75, 1],
      ]);
      await same(query());
    });

    it("answers every agent's, an agent's traces per workspace of the spans naming it", async () => {
      const page = await store.evaluationFacts(query({ subjectType: 'agent' }));
      expect(page.subjects).toBe(4);
      const x = page.rows.filter((r) => r.subject === 'agent-x' && r.window === 0);
      expect(x.map((r) => [r.workspaceId, r.samples])).toEqual([['ws-1', 1]]);
      await same(query({ subjectType: 'agent' }));
    });

    it('pages over subjects by code point, and keeps the names with the most scores', async () => {
      for (const subjectType of ['skill', 'agent'] as const) {
        const whole = await store.evaluationFacts(query({ subjectType }));
        const rows: EvaluationFacts[] = [];
        let after: string | null = null;
        let calls = 0;
        do {
          const q = query({ subjectType, limit: 2, after });
          const page = await store.evaluationFacts(q);
          expectSameEvaluationFacts(page, evaluationFactsReference(spans, evaluations, q));
          rows.push(...page.rows);
          after = page.next;
          calls++;
        } while (after !== null);
        expect(calls).toBe(Math.floor(whole.subjects / 2) + 1);
        expectSameEvaluationFacts({ ...whole, rows }, whole);
        const two = await store.evaluationFacts(query({ subjectType, topNames: 2 }));
        const names = new Map<string, Set<string>>();
        for (const r of two.rows)
          names.set(
            `${r.subject} ${r.workspaceId}`,
            (names.get(`${r.subject} ${r.workspaceId}`) ?? new Set()).add(r.evaluationName),
          );
        expect(Math.max(...[...names.values()].map((n) => n.size))).toBe(2);
        await same(query({ subjectType, topNames: 2 }));
        await same(query({ subjectType, topNames: 1, windows: WINDOWS.slice(3) }));
      }
    });

    it('pages over the subjects `only` names, or all but those `except` names', async () => {
      const whole = await store.evaluationFacts(query({ subjectType: 'agent' }));
      const subjects = [...new Set(whole.rows.map((r) => r.subject))];
      const named = [subjects[1] as string, 'no-such-agent'];
      for (const choice of [{ only: named }, { except: named }, { only: [] }]) {
        const q = query({ subjectType: 'agent', ...choice });
        await same(q);
        const page = await store.evaluationFacts(q);
        expect([...new Set(page.rows.map((r) => r.subject))]).toEqual(
          subjects.filter((s) => ('only' in choice ? choice.only.includes(s) : !choice.except.includes(s))),
        );
      }
    });

    it("agrees with operation 1's evaluation_score by name for the same subject, range and workspace", async () => {
      for (const subjectType of ['skill', 'agent'] as const) {
        const page = await store.evaluationFacts(query({ subjectType }));
        // Every subject with spans in a window: the names operation 1 scores are the rows', and agree.
        const facts = await store.subjectFacts({ ...query({ subjectType }) });
        let compared = 0;
        for (const f of facts.rows) {
          const w = WINDOWS[f.window] as (typeof WINDOWS)[number];
          const rows = await store.aggregate({
            orgId: 'org-1',
            subject: subjectType === 'skill' ? { skill: f.subject } : { agent: f.subject },
            startS: w.startS,
            endS: w.endS,
            workspaceIds: [f.workspaceId],
            filters: [],
            groupBy: ['evaluation'],
            measures: ['evaluation_score'],
          });
          const scored = rows.filter((r) => r.values.evaluation_score !== null);
          const mine = page.rows.filter(
            (r) => r.subject === f.subject && r.workspaceId === f.workspaceId && r.window === f.window,
          );
          const what = `${f.subject} ${f.workspaceId} ${f.window}`;
          expect(mine.map((r) => r.evaluationName).sort(), what).toEqual(
            scored.map((r) => r.groups.evaluation as string).sort(),
          );
          for (const r of mine) {
            const score = scored.find((x) => x.groups.evaluation === r.evaluationName)?.values.evaluation_score;
            expect(r.meanScore, `${what} ${r.evaluationName}`).toBeCloseTo(score ?? Number.NaN, 9);
            compared++;
          }
        }
        expect(compared).toBeGreaterThan(20);
      }
    });

    it('never answers another organization, nor a subject without scores', async () => {
      const page = await store.evaluationFacts(query());
      expect(page.rows.some((r) => r.subject === 'sk-quiet')).toBe(false);
      for (const orgId of ['org-2', 'org-decoy', 'org-none'])
        expect(await store.evaluationFacts(query({ orgId }))).toEqual({ rows: [], subjects: 0, next: null });
    });

    it('refuses a query outside its bounds, and one whose signal is aborted', async () => {
      await expect(store.evaluationFacts(query({ windows: [] }))).rejects.toThrow(/windows/);
      await expect(store.evaluationFacts(query({ limit: 1001 }))).rejects.toThrow(/limit/);
      await expect(store.evaluationFacts(query({ topNames: 0 }))).rejects.toThrow(/topNames/);
      await expect(store.evaluationFacts(query({ windows: [{ startS: END, endS: END - 1 }] }))).rejects.toThrow(
        /window/,
      );
      const controller = new AbortController();
      controller.abort();
      await expect(store.evaluationFacts(query(), controller.signal)).rejects.toThrow();
    });
  });
}
