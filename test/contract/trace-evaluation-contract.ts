/**
 * Evaluations on every engine (TraceStore.insertEvaluations, the measures evaluation_score and
 * evaluation_pass_rate, the dimension `evaluation`): expected values come from trace-reference.ts
 * over the same spans and evaluations, never from the engine. The data: the contract's generated
 * spans, and evaluations of a third of them, some scored and labelled, some only one of the two,
 * some a day later (another bucket); decoys that must never count: the same traces in another
 * organization, in a workspace no query reads, in the other readable workspace (an evaluator who
 * may write there must not score this workspace's traces), traces no span has, times before any
 * range. Names hold SQL quotes and control characters, as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPAN_DIMENSIONS, type AggregateQuery, type SpanRow, type TraceStore } from '../../src/store/trace-port.ts';
import { EVALUATION_MEASURES, type EvaluationRow } from '../../src/store/evaluation-row.ts';
import { verdictOf } from '../../src/otlp/logs/evaluations.ts';
import { END, generated, metricPoints, skillQuery, type ContractOptions } from './trace-contract.ts';
import { expectSameRows, reference } from './trace-reference.ts';

const NAMES = ['relevance', 'groundedness', "x' OR '1'='1", 'tab\tnew\nline\\N'];
const LABELS = ['pass', 'fail', 'PASS', ' Correct ', 'incorrect', 'maybe', null, 'not_relevant'];

/** Evaluations of every third span of `spans`, with the decoys listed above. */
function evaluationsOf(spans: readonly SpanRow[]): EvaluationRow[] {
  const out: EvaluationRow[] = [];
  spans.forEach((s, i) => {
    if (i % 3 !== 0) return;
    const at = (n: number, extra: Partial<EvaluationRow> = {}): EvaluationRow => {
      const label = extra.label === undefined ? (LABELS[(i * 3 + n) % LABELS.length] ?? null) : extra.label;
      return {
        org_id: s.org_id,
        workspace_id: s.workspace_id,
        key: `eval-${i}-${n}`,
        trace_id: s.trace_id,
        span_id: n % 2 === 0 ? s.span_id : null,
        response_id: i % 2 === 0 ? `chatcmpl-${i}` : null,
        name: NAMES[(i + n) % NAMES.length] as string,
        score: ((i * 37 + n * 11) % 101) / 20,
        explanation: n === 0 ? `because ${i}` : null,
        time_s: s.start_s + 30 + 60 * n,
        ...extra,
        label,
        passed: verdictOf(label),
      };
    };
    out.push(at(0));
    if (i % 4 === 0) out.push(at(1, { score: null, label: 'pass' }));
    if (i % 5 === 0) out.push(at(2, { label: null }));
    if (i % 6 === 0) out.push(at(3, { time_s: s.start_s + 86400 }));
    if (i % 7 === 0) out.push(at(4, { workspace_id: 'ws-elsewhere' }));
    if (i % 9 === 0) out.push(at(5, { org_id: 'org-decoy' }));
    if (i % 8 === 0) out.push(at(6, { workspace_id: s.workspace_id === 'ws-1' ? 'ws-2' : 'ws-1', score: 1000 }));
    if (i % 11 === 0) out.push(at(7, { trace_id: i.toString(16).padStart(8, '0').padEnd(32, 'e') }));
    if (i % 13 === 0) out.push(at(8, { time_s: s.start_s - 400 * 86400 }));
  });
  return out;
}

export function evaluationContract(
  engine: string,
  open: () => Promise<TraceStore>,
  options: ContractOptions = {},
): void {
  describe(`trace store contract, evaluations: ${engine}`, () => {
    let store: TraceStore;
    const spans = generated();
    const points = metricPoints(spans);
    const evaluations = evaluationsOf(spans);
    const base: AggregateQuery = skillQuery({ measures: [...EVALUATION_MEASURES] });
    const same = async (q: AggregateQuery) =>
      expectSameRows(await store.aggregate(q), reference(spans, q, points, evaluations));

    beforeAll(async () => {
      store = await open();
      const perChunk = Math.ceil(evaluations.length / Math.ceil(spans.length / 1000));
      for (let i = 0; i < spans.length; i += 1000) {
        // The evaluations of a chunk go with the spans before them, or before their spans.
        const chunk = evaluations.slice((i / 1000) * perChunk, (i / 1000 + 1) * perChunk);
        const outcome = await store.insertEvaluations(chunk);
        expect(outcome).toEqual({ stored: chunk.length, duplicates: 0 });
        await store.insertSpans(spans.slice(i, i + 1000));
        await options.afterChunk?.(store, i / 1000);
      }
      await store.insertMetricPoints(points);
    });
    afterAll(async () => {
      await store.close();
    });

    it('computes the mean score and the pass rate of the skill traces, alone and beside other measures', async () => {
      const [row] = await store.aggregate(base);
      expect(row?.values.evaluation_score).toBeGreaterThan(0);
      expect(row?.values.evaluation_pass_rate).toBeGreaterThan(0);
      expect(row?.values.evaluation_pass_rate).toBeLessThan(1);
      await same(base);
      await same({ ...base, measures: ['spans', 'traces', 'evaluation_score', 'lines_added', 'evaluation_pass_rate'] });
    });

    it('buckets evaluations by their own time, by day and by week', async () => {
      await same({ ...base, bucket: 'day' });
      await same({ ...base, bucket: 'week', measures: ['evaluation_pass_rate', 'tokens'] });
    });

    it.each(SPAN_DIMENSIONS.map((d) => [d]))(
      'counts an evaluation for each group of %s holding a span of its trace, with series totals',
      async (d) => {
        await same({ ...base, groupBy: [d], measures: ['evaluation_score', 'evaluation_pass_rate', 'traces'] });
        await same({ ...base, groupBy: [d], bucket: 'day', measures: ['evaluation_score', 'commits'] });
      },
    );

    it('groups by the evaluation name: the groups are the evaluations, as sent', async () => {
      const rows = await store.aggregate({ ...base, groupBy: ['evaluation'] });
      expect(rows.map((r) => r.groups.evaluation).sort()).toEqual([...NAMES].sort());
      await same({ ...base, groupBy: ['evaluation'] });
      await same({ ...base, groupBy: ['evaluation'], bucket: 'day' });
      await same({ ...base, groupBy: ['model', 'evaluation'], bucket: 'week', measures: ['evaluation_pass_rate'] });
      await same({ ...base, groupBy: ['evaluation', 'harness', 'user'] });
    });

    it('filters evaluations by name with every operator, beside span filters', async () => {
      const ops: AggregateQuery['filters'] = [
        { key: 'evaluation', op: 'eq', values: ['relevance'] },
        { key: 'evaluation', op: 'neq', values: ['relevance'] },
        { key: 'evaluation', op: 'in', values: ["x' OR '1'='1", 'no-such-name'] },
        { key: 'evaluation', op: 'exists', values: [] },
        { key: 'evaluation', op: 'not_exists', values: [] },
      ];
      for (const f of ops) {
        await same({ ...base, filters: [f] });
        await same({ ...base, filters: [f, { key: 'model', op: 'eq', values: ['gpt-4o'] }], groupBy: ['evaluation'] });
      }
      const [none] = await store.aggregate({ ...base, filters: [{ key: 'evaluation', op: 'eq', values: ['nope'] }] });
      expect(none?.values).toEqual({ evaluation_score: null, evaluation_pass_rate: null });
    });

    it('keeps the top groups and the listed groups by an evaluation measure or the name', async () => {
      await same({ ...base, groupBy: ['evaluation'], top: [{ by: 'evaluation_score', direction: 'desc', limit: 2 }] });
      await same({
        ...base,
        groupBy: ['evaluation'],
        bucket: 'day',
        measures: ['evaluation_pass_rate'],
        top: [{ by: 'evaluation', direction: 'asc', limit: 1 }],
      });
      await same({ ...base, groupBy: ['evaluation'], onlyGroups: [{ evaluation: 'relevance' }, { evaluation: 'no' }] });
      await same({
        ...base,
        groupBy: ['evaluation', 'model'],
        onlyGroups: [
          { evaluation: 'groundedness', model: 'gpt-4o' },
          { evaluation: 'relevance', model: null },
        ],
      });
      await same({
        ...base,
        groupBy: ['model'],
        measures: ['traces', 'evaluation_score'],
        top: [{ by: 'evaluation_pass_rate', direction: 'asc', limit: 2 }],
      });
      await same({ ...base, groupBy: ['user'], onlyGroups: [{ user: 'u1' }, { user: 'u3' }] });
    });

    it("counts for an agent's traces, a skill version, a workspace and never another organization", async () => {
      await same({ ...base, subject: { agent: 'agent-0001' }, groupBy: ['evaluation'] });
      await same({ ...base, subject: { agent: 'planner' }, bucket: 'day' });
      await same({ ...base, subject: { skill: 'sk-a', skillVersion: 2 } });
      await same({ ...base, workspaceIds: ['ws-2'], groupBy: ['evaluation'] });
      await same({ ...base, orgId: 'org-2', workspaceIds: ['ws-9'], groupBy: ['evaluation'] });
      const [decoy] = await store.aggregate({ ...base, orgId: 'org-decoy', workspaceIds: ['ws-1', 'ws-2'] });
      expect(decoy?.values).toEqual({ evaluation_score: null, evaluation_pass_rate: null });
    });

    it('refuses the evaluation dimension with other measures', async () => {
      await expect(store.aggregate({ ...base, groupBy: ['evaluation'], measures: ['spans'] })).rejects.toThrow();
      const filtered = { ...base, filters: [{ key: 'evaluation' as const, op: 'exists' as const, values: [] }] };
      await expect(store.aggregate({ ...filtered, measures: ['evaluation_score', 'traces'] })).rejects.toThrow();
    });

    it('stores a resent evaluation once, and the answers stay', async () => {
      const mark = await store.watermark();
      // Some that count (a mean is the same over every evaluation twice).
      const again = evaluations.filter((e) => e.org_id === 'org-1' && e.time_s >= base.startS).slice(0, 50);
      expect(await store.insertEvaluations(again)).toEqual({ stored: 0, duplicates: 50 });
      // Within one call too: the same evaluation twice is one.
      const fresh = { ...(evaluations[0] as EvaluationRow), key: 'eval-fresh' };
      expect(await store.insertEvaluations([fresh, fresh])).toEqual({ stored: 1, duplicates: 1 });
      expect(await store.watermark()).not.toBe(mark);
      const withFresh = [...evaluations, fresh];
      const q = { ...base, groupBy: ['evaluation' as const] };
      expectSameRows(await store.aggregate(q), reference(spans, q, points, withFresh));
      if (store.engine === 'postgres') expect((await store.storedBytes()).evaluations).toBeGreaterThan(0);
    });

    it('retention deletes the evaluations before the cutoff', async () => {
      const cutoff = END - 20 * 86400;
      await store.pruneBefore(cutoff);
      // Written again: those before the cutoff were deleted (stored anew), the others are still there.
      const before = evaluations.filter((e) => e.time_s < cutoff).length;
      expect(before).toBeGreaterThan(0);
      expect(await store.insertEvaluations(evaluations)).toEqual({
        stored: before,
        duplicates: evaluations.length - before,
      });
    });
  });
}
