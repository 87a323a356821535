/**
 * Detection's facts (store/facts-port.ts) computed in plain TypeScript over span rows and
 * evaluations: the references the engines' subjectFacts and evaluationFacts are compared with
 * (test/contract/subject-facts-contract.ts, evaluation-facts-contract.ts). A skill's traces are
 * those with an invocation naming it; an agent's in a workspace, those with a span of that
 * workspace naming it (operation 1 scopes agent mappings to the workspaces it reads).
 */
import { expect } from 'vitest';
import type { Measure, SpanRow } from '../../src/store/trace-port.ts';
import { compareValues } from '../../src/store/group-order.ts';
import type { EvaluationRow } from '../../src/store/evaluation-row.ts';
import {
  EVALUATION_FACT_NAMES,
  type EvaluationFacts,
  type EvaluationFactsPage,
  type EvaluationFactsQuery,
  type SubjectFacts,
  type SubjectFactsPage,
  type SubjectFactsQuery,
  type ToolFacts,
} from '../../src/store/facts-port.ts';
import { measure } from './trace-reference.ts';

/** Text by Unicode code point, as the engines order subjects. */
const byCodePoint = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The traces of each `subject|workspace` among an organization's spans. */
function subjectTraces(org: readonly SpanRow[], type: 'skill' | 'agent'): Map<string, Set<string>> {
  const tracesOf = new Map<string, Set<string>>();
  const map = (key: string, trace: string) => tracesOf.set(key, (tracesOf.get(key) ?? new Set()).add(trace));
  for (const s of org) {
    if (type === 'skill' && s.category === 'skill_invocation' && s.skill !== null)
      for (const w of new Set(org.map((x) => x.workspace_id))) map(`${s.skill}|${w}`, s.trace_id);
    if (type === 'agent' && s.agent !== null) map(`${s.agent}|${s.workspace_id}`, s.trace_id);
  }
  return tracesOf;
}

/**
 * The page of the first `limit` subjects after `after` among the rows' that `only` and `except`
 * choose, and their rows.
 */
function paged<R extends { subject: string }>(
  rows: readonly R[],
  q: { limit: number; after: string | null; only?: readonly string[]; except?: readonly string[] },
  order: (a: R, b: R) => number,
): { rows: R[]; subjects: number; next: string | null } {
  const subjects = [...new Set(rows.map((r) => r.subject))]
    .filter((s) => q.only === undefined || q.only.includes(s))
    .filter((s) => q.except === undefined || !q.except.includes(s))
    .filter((s) => q.after === null || byCodePoint(s, q.after) > 0)
    .sort(byCodePoint)
    .slice(0, q.limit);
  return {
    rows: rows.filter((r) => subjects.includes(r.subject)).sort(order),
    subjects: subjects.length,
    next: subjects.length === q.limit ? (subjects.at(-1) ?? null) : null,
  };
}

/**
 * Detection's facts (store/facts-port.ts) span by span: for each workspace and subject, the spans
 * of that workspace in the subject's traces (a skill's: traces with an invocation naming it; an
 * agent's: traces with a span of that workspace naming it, as operation 1 scopes agent mappings to
 * the workspaces it reads), per window, measured as `measure` does; the page of the first `limit`
 * subjects after `after` that have spans in a window.
 */
export function subjectFactsReference(all: readonly SpanRow[], q: SubjectFactsQuery): SubjectFactsPage {
  const org = all.filter((s) => s.org_id === q.orgId);
  const rows: SubjectFacts[] = [];
  for (const [key, traces] of subjectTraces(org, q.subjectType)) {
    const [subject, workspaceId] = key.split('|') as [string, string];
    q.windows.forEach((w, window) => {
      const spans = org.filter(
        (s) => traces.has(s.trace_id) && s.workspace_id === workspaceId && s.start_s >= w.startS && s.start_s < w.endS,
      );
      if (spans.length === 0) return;
      const m = (x: Measure) => measure(spans, x);
      const tools = new Map<string, ToolFacts>();
      for (const s of spans.filter((x) => x.category === 'tool_call')) {
        const k = JSON.stringify([s.tool, s.mcp]);
        const t = tools.get(k) ?? { tool: s.tool, mcp: s.mcp, calls: 0, errors: 0 };
        t.calls++;
        if (s.is_error) t.errors++;
        tools.set(k, t);
      }
      const models = new Map<string, number>();
      for (const s of spans) if (s.model !== null) models.set(s.model, (models.get(s.model) ?? 0) + s.cost);
      rows.push({
        window,
        workspaceId,
        subject,
        traces: m('traces') as number,
        sessions: m('sessions') as number,
        activeUsers: m('active_users') as number,
        invocations: m('skill_invocations') as number,
        errors: spans.filter((s) => s.category === 'skill_invocation' && s.is_error).length,
        tokens: m('tokens') as number,
        cost: m('cost') as number,
        latencyP50: m('latency_p50'),
        latencyP90: m('latency_p90'),
        latencyP99: m('latency_p99'),
        tokensPerTrace: m('tokens_per_trace'),
        successRate: m('success_rate'),
        tools: [...tools.values()]
          .sort(
            (a, b) =>
              b.errors - a.errors || b.calls - a.calls || compareValues(a.tool, b.tool) || compareValues(a.mcp, b.mcp),
          )
          .slice(0, q.topTools ?? 10),
        models: [...models]
          .map(([model, cost]) => ({ model, cost }))
          .sort((a, b) => b.cost - a.cost || byCodePoint(a.model, b.model))
          .slice(0, q.topModels ?? 10),
      });
    });
  }
  return paged(
    rows,
    q,
    (a, b) => byCodePoint(a.subject, b.subject) || byCodePoint(a.workspaceId, b.workspaceId) || a.window - b.window,
  );
}

/**
 * Detection's evaluation scores one evaluation at a time: for each workspace W, subject and window,
 * the scored evaluations of W whose own time lies in the window and whose trace is one of the
 * subject's traces with a span of W in the window (operation 1's `evaluation_score` with
 * `workspace_id` W over that range), per name: their mean and count; per (W, subject) the
 * `topNames` names with the most scores over all windows (then by name); the page of the first
 * `limit` subjects after `after` with such a score.
 */
export function evaluationFactsReference(
  all: readonly SpanRow[],
  evaluations: readonly EvaluationRow[],
  q: EvaluationFactsQuery,
): EvaluationFactsPage {
  const org = all.filter((s) => s.org_id === q.orgId);
  const scored = evaluations.filter((e) => e.org_id === q.orgId && e.score !== null);
  const rows: EvaluationFacts[] = [];
  for (const [key, traces] of subjectTraces(org, q.subjectType)) {
    const [subject, workspaceId] = key.split('|') as [string, string];
    const mine: EvaluationFacts[] = [];
    q.windows.forEach((w, window) => {
      const inWindow = (t: number) => t >= w.startS && t < w.endS;
      const spanned = new Set(
        org
          .filter((s) => traces.has(s.trace_id) && s.workspace_id === workspaceId && inWindow(s.start_s))
          .map((s) => s.trace_id),
      );
      const byName = new Map<string, number[]>();
      for (const e of scored)
        if (e.workspace_id === workspaceId && inWindow(e.time_s) && spanned.has(e.trace_id))
          byName.set(e.name, [...(byName.get(e.name) ?? []), e.score as number]);
      for (const [evaluationName, scores] of byName)
        mine.push({
          window,
          workspaceId,
          subject,
          evaluationName,
          meanScore: scores.reduce((a, b) => a + b, 0) / scores.length,
          samples: scores.length,
        });
    });
    const totals = new Map<string, number>();
    for (const r of mine) totals.set(r.evaluationName, (totals.get(r.evaluationName) ?? 0) + r.samples);
    const kept = [...totals]
      .sort(([a, n], [b, m]) => m - n || byCodePoint(a, b))
      .slice(0, q.topNames ?? EVALUATION_FACT_NAMES)
      .map(([name]) => name);
    rows.push(...mine.filter((r) => kept.includes(r.evaluationName)));
  }
  return paged(
    rows,
    q,
    (a, b) =>
      byCodePoint(a.subject, b.subject) ||
      byCodePoint(a.workspaceId, b.workspaceId) ||
      byCodePoint(a.evaluationName, b.evaluationName) ||
      a.window - b.window,
  );
}

/** Same rows in the same order; counts exactly, means up to summation order (1e-9 relative). */
export function expectSameEvaluationFacts(actual: EvaluationFactsPage, expected: EvaluationFactsPage): void {
  expect({ subjects: actual.subjects, next: actual.next }).toEqual({
    subjects: expected.subjects,
    next: expected.next,
  });
  const key = (r: EvaluationFacts) => JSON.stringify([r.subject, r.workspaceId, r.evaluationName, r.window, r.samples]);
  expect(actual.rows.map(key)).toEqual(expected.rows.map(key));
  actual.rows.forEach((a, i) => {
    const e = (expected.rows[i] as EvaluationFacts).meanScore;
    expect(Math.abs(a.meanScore - e), `${key(a)}: ${a.meanScore} vs ${e}`).toBeLessThanOrEqual(
      1e-9 * Math.max(1, Math.abs(e)),
    );
  });
}

/** Same rows in the same order; counts exactly, costs and ratios up to summation order (1e-9 relative). */
export function expectSameFacts(actual: SubjectFactsPage, expected: SubjectFactsPage): void {
  const close = (a: number | null, e: number | null, what: string) => {
    if (e === null) expect(a, what).toBeNull();
    else
      expect(Math.abs((a as number) - e), `${what}: ${a} vs ${e}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(e)));
  };
  expect({ subjects: actual.subjects, next: actual.next }).toEqual({
    subjects: expected.subjects,
    next: expected.next,
  });
  const key = (r: SubjectFacts) => `${r.subject} ${r.workspaceId} ${r.window}`;
  expect(actual.rows.map(key)).toEqual(expected.rows.map(key));
  actual.rows.forEach((a, i) => {
    const e = expected.rows[i] as SubjectFacts;
    const { cost, tokensPerTrace, successRate, models, ...exact } = e;
    const { cost: aCost, tokensPerTrace: aTpt, successRate: aSr, models: aModels, ...aExact } = a;
    expect(aExact, key(e)).toEqual(exact);
    close(aCost, cost, `${key(e)} cost`);
    close(aTpt, tokensPerTrace, `${key(e)} tokens per trace`);
    close(aSr, successRate, `${key(e)} success rate`);
    expect(
      aModels.map((m) => m.model),
      `${key(e)} models`,
    ).toEqual(models.map((m) => m.model));
    aModels.forEach((m, j) => close(m.cost, (models[j] as { cost: number }).cost, `${key(e)} ${m.model} cost`));
  });
}
