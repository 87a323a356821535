/**
 * The detection scheduler (src/insights/scheduler.ts) over the real stores of each mode: SQLite's
 * insight store with DuckDB's traces, PostgreSQL's with PostgreSQL's. Runs are incremental from
 * each organization's cursor and bounded in steps, a run over steps done before stores nothing new,
 * one replica at a time holds the lease (renewed before each organization, so a run longer than
 * the lease keeps it), a workspace's overrides change its rules, evaluation scores that drop are
 * found, and the cost lands in /metrics without an organization label.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listInsightSchemas } from '../../src/skills/insight-schemas.ts';
import type { DetectionConfig } from '../../src/config-detection.ts';
import { startDetection } from '../../src/insights/scheduler.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import type { SubjectFactsQuery } from '../../src/store/facts-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { EvaluationRow } from '../../src/store/evaluation-row.ts';
import type { SpanRow, TraceStore } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { onDetectionEngines } from '../helpers/detection-engines.ts';

const END = Date.UTC(2026, 10, 1) / 1000;
const HOUR = 3600;
const DAY = 86400;
const CONFIG: DetectionConfig = {
  enabled: false,
  intervalMs: 60_000,
  maxSteps: 3,
  subjectsPerCall: 200,
  maxSubjects: 1000,
  settleS: 600,
};

/** 40 invocations a day over 8 days in ws-s and ws-t; sk-slow's of the last day take three times as long. */
function spans(orgId: string): SpanRow[] {
  const rows: SpanRow[] = [];
  for (const [n, skill, workspace] of [
    [0, 'sk-slow', 'ws-s'],
    [1, 'sk-fine', 'ws-s'],
    [2, 'sk-slow', 'ws-t'],
  ] as const)
    for (let i = 0; i < 8 * 40; i++) {
      const startS = END - 8 * DAY + Math.floor(i / 40) * DAY + (i % 40) * 600;
      const slow = skill === 'sk-slow' && startS >= END - DAY ? 3 : 1;
      rows.push(
        spanRow((orgId === 'org-s' ? 0 : 100_000) + n * 10_000 + i, {
          org_id: orgId,
          workspace_id: workspace,
          category: 'skill_invocation',
          skill,
          start_s: startS,
          duration_ms: (1000 + (i % 10) * 10) * slow,
        }),
      );
    }
  return rows;
}

/** A `relevance` score of each of sk-fine's invocations: 0.9 around, 0.5 on the last day (a drop). */
function evaluations(rows: readonly SpanRow[]): EvaluationRow[] {
  return rows
    .filter((r) => r.skill === 'sk-fine')
    .map((r, i) => ({
      org_id: r.org_id,
      workspace_id: r.workspace_id,
      key: `eval-${r.trace_id}`,
      trace_id: r.trace_id,
      span_id: r.span_id,
      response_id: null,
      name: 'relevance',
      score: (r.start_s >= END - DAY ? 0.5 : 0.9) + (i % 5) / 100,
      label: null,
      passed: null,
      explanation: null,
      time_s: r.start_s + 60,
    }));
}

function schedulerSuite(engine: string, open: () => Promise<{ registry: RegistryStore; traces: TraceStore }>) {
  describe(`insight detection on a schedule: ${engine}`, () => {
    let registry: RegistryStore;
    let traces: TraceStore;
    let metrics: Metrics;
    let nowMs = (END + 2 * HOUR) * 1000;
    const warnings: object[] = [];
    const log = { info: () => undefined, warn: (obj: object) => void warnings.push(obj) };
    const detection = (holder: string) =>
      startDetection({
        traces,
        evaluations: traces,
        insights: registry.insights,
        state: registry.detection,
        config: CONFIG,
        metrics: metrics.detection,
        log,
        holder,
        now: () => nowMs,
      });
    const regressions = async (orgId = 'org-s') =>
      (
        await registry.insights.listInsights({
          orgId,
          workspaceIds: ['ws-s', 'ws-t'],
          kinds: ['latency_regression'],
          limit: 100,
        })
      ).map((i) => `${i.workspace_id} ${i.subject.id} ${i.window_end_s - END}`);

    beforeAll(async () => {
      ({ registry, traces } = await open());
      await traces.insertSpans(spans('org-s'));
      await traces.insertEvaluations(evaluations(spans('org-s')));
      metrics = createMetrics({ defaultMetrics: false });
    });
    afterAll(async () => {
      await traces.close();
      await registry.close();
    });

    it("runs an organization's latest complete step first, then catches up from its cursor, bounded", async () => {
      // Now is END + 2 h; with 10 minutes to settle, the latest complete step is END + 1 h.
      const run = await detection('replica-a').runOnce();
      expect(run.leader).toBe(true);
      expect(run.orgs.map((o) => [o.orgId, o.steps, o.cursorS])).toEqual([['org-s', 1, END + HOUR]]);
      expect(await registry.insights.detectionCursor('org-s')).toBe(END + HOUR);
      expect(await regressions()).toEqual(['ws-s sk-slow 3600', 'ws-t sk-slow 3600']);
      // Five hours later: three steps (the bound), then the other two.
      nowMs += 5 * HOUR * 1000;
      const next = await detection('replica-a').runOnce();
      expect(next.orgs.map((o) => [o.steps, o.cursorS])).toEqual([[3, END + 4 * HOUR]]);
      const last = await detection('replica-a').runOnce();
      expect(last.orgs.map((o) => [o.steps, o.cursorS])).toEqual([[2, END + 6 * HOUR]]);
      // Within the cooldown, the same regressions are not found again.
      expect(await regressions()).toEqual(['ws-s sk-slow 3600', 'ws-t sk-slow 3600']);
      const text = await metrics.registry.metrics();
      expect(text).toContain('gateway_insight_detection_steps_total 6');
      expect(text).toContain('gateway_insight_detection_subjects_total{type="skill"} 12');
      expect(text).toContain('gateway_insight_detection_subjects_total{type="evaluation"} 6');
      expect(text).toContain('gateway_insights_found_total{kind="latency_regression"} 2');
      expect(text).toContain('gateway_insights_found_total{kind="evaluation_drop"} 1');
      expect(text).toContain('gateway_insight_detection_runs_total{outcome="ok"} 3');
      expect(text).toContain('gateway_insight_detection_org_run_seconds_count 3');
      expect(text).toMatch(/gateway_insight_detection_lag_seconds 3600\n/);
      expect(text).not.toContain('org-s');
    });

    it('stores nothing new when it runs steps it has done before', async () => {
      await registry.insights.setDetectionCursor('org-s', END - 2 * HOUR);
      nowMs = (END + 2 * HOUR) * 1000;
      // END ends a UTC day: its usage summaries are new, the regressions are within their cooldown.
      const run = await detection('replica-a').runOnce();
      expect(run.orgs.map((o) => [o.steps, o.found])).toEqual([[3, { usage_summary: 3 }]]);
      await registry.insights.setDetectionCursor('org-s', END - 2 * HOUR);
      const again = await detection('replica-a').runOnce();
      expect(again.orgs.map((o) => [o.steps, o.found])).toEqual([[3, {}]]);
      expect(await regressions()).toEqual(['ws-s sk-slow 3600', 'ws-t sk-slow 3600']);
    });

    it('runs on one replica at a time: another waits for the lease to end', async () => {
      const other = await detection('replica-b').runOnce();
      expect(other).toEqual({ leader: false, orgs: [] });
      expect(await metrics.registry.metrics()).toContain(
        'gateway_insight_detection_runs_total{outcome="not_leader"} 1',
      );
      nowMs += 600_000 + 1;
      expect((await detection('replica-b').runOnce()).leader).toBe(true);
      expect((await detection('replica-a').runOnce()).leader).toBe(false);
    });

    it('runs once at start and then every interval when enabled, until stopped', async () => {
      const runs = async () =>
        (await metrics.registry.getSingleMetric('gateway_insight_detection_runs_total')?.get())?.values;
      const before = (await runs())?.find((v) => v.labels.outcome === 'ok')?.value ?? 0;
      const enabled = startDetection({
        traces,
        evaluations: traces,
        insights: registry.insights,
        state: registry.detection,
        config: { ...CONFIG, enabled: true, intervalMs: 3_600_000 },
        metrics: metrics.detection,
        log,
        holder: 'replica-b',
        now: () => nowMs,
      });
      // The start's run is due at once (a timer of 0 ms, which fires before this one); runOnce waits for it.
      await new Promise((resolve) => setTimeout(resolve, 0));
      await enabled.runOnce();
      enabled.stop();
      expect((await runs())?.find((v) => v.labels.outcome === 'ok')?.value).toBe(before + 2);
    });

    it("applies a workspace's overrides, ignoring (and reporting) those that no longer check", async () => {
      await traces.insertSpans(spans('org-u'));
      await registry.insights.setDetectionSettings('org-u', 'ws-t', {
        'latency_regression.factor': 4,
        'no.such.setting': 1,
      });
      // Its first run: the latest complete step, END + 1 h (org-s has done it).
      nowMs = (END + HOUR + 600) * 1000;
      const run = await detection('replica-b').runOnce();
      expect(run.orgs.map((o) => [o.orgId, o.steps, o.ignoredSettings])).toEqual([
        ['org-s', 0, []],
        ['org-u', 1, ['ws-t: no.such.setting']],
      ]);
      expect(warnings).toEqual([{ orgId: 'org-u', ignored: ['ws-t: no.such.setting'] }]);
      // ws-t's factor of 4 keeps sk-slow's threefold regression quiet there.
      expect(await regressions('org-u')).toEqual(['ws-s sk-slow 3600']);
    });

    it('stores only payloads valid against their kind of operation 4', async () => {
      const ajv = new Ajv2020({ strict: true });
      const validators = new Map(listInsightSchemas().items.map((x) => [x.name, ajv.compile(x.schema)]));
      const stored = [];
      for (const orgId of ['org-s', 'org-u'])
        stored.push(...(await registry.insights.listInsights({ orgId, workspaceIds: ['ws-s', 'ws-t'], limit: 100 })));
      expect(new Set(stored.map((i) => i.kind))).toEqual(
        new Set(['latency_regression', 'usage_summary', 'evaluation_drop']),
      );
      const drop = stored.find((i) => i.kind === 'evaluation_drop');
      expect([drop?.workspace_id, drop?.subject, drop?.window_end_s]).toEqual([
        'ws-s',
        { type: 'skill', id: 'sk-fine' },
        END + HOUR,
      ]);
      // The window [END - 23 h, END + 1 h) holds 34 of the last day's 40 scores; the baseline the other 6 and 274.
      expect(drop?.payload).toMatchObject({ evaluation_name: 'relevance', samples: 34, previous_samples: 280 });
      for (const i of stored) {
        const validate = validators.get(i.kind);
        expect(validate?.(i.payload), `${i.id} ${JSON.stringify(validate?.errors)}`).toBe(true);
      }
    });

    it('renews the lease before each organization: a run longer than the lease keeps it', async () => {
      // Each organization's step takes 400 s of the injected clock (in its facts call), so a run of
      // two outlasts the lease of 600 s taken at its start; another replica asks for it meanwhile.
      const orgs = await traces.activeOrganizations(0, 100);
      expect(orgs).toEqual(['org-s', 'org-u']);
      nowMs = (END + 10 * HOUR + 600) * 1000;
      for (const orgId of orgs) await registry.insights.setDetectionCursor(orgId, END + 9 * HOUR);
      const start = nowMs;
      const rival: { atS: number; leader: boolean }[] = [];
      const slow = {
        activeOrganizations: (sinceS: number, limit: number) => traces.activeOrganizations(sinceS, limit),
        firstSpanS: (orgId: string, sinceS: number) => traces.firstSpanS(orgId, sinceS),
        subjectFacts: async (q: SubjectFactsQuery, signal?: AbortSignal) => {
          if (q.subjectType === 'skill') {
            nowMs += 400_000;
            if (nowMs - start > 600_000)
              rival.push({ atS: (nowMs - start) / 1000, leader: (await detection('replica-d').runOnce()).leader });
          }
          return traces.subjectFacts(q, signal);
        },
      };
      const run = await startDetection({
        traces: slow,
        evaluations: traces,
        insights: registry.insights,
        state: registry.detection,
        config: CONFIG,
        log,
        holder: 'replica-c',
        now: () => nowMs,
      }).runOnce();
      expect([run.leader, run.orgs.map((o) => [o.orgId, o.steps])]).toEqual([
        true,
        [
          ['org-s', 1],
          ['org-u', 1],
        ],
      ]);
      // Renewed before org-u (at 400 s, to 1,000 s): the rival at 800 s finds it held, and so after the run.
      expect(rival).toEqual([{ atS: 800, leader: false }]);
      expect((await detection('replica-d').runOnce()).leader).toBe(false);
    });
  });
}

await onDetectionEngines('detect', 'insight detection on a schedule', END, schedulerSuite);
