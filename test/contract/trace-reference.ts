/**
 * The trace statistics computed in plain TypeScript over span rows: the independent reference
 * the engines are compared with. Percentiles are nearest-rank: the value at index
 * ceil(q * n) - 1 of the sorted durations. Harness measures sum the metric points whose (workspace,
 * session) is one of the group's selected spans anywhere in the range, each in the bucket of its own time.
 * Evaluation measures count the evaluations whose (workspace, trace) is one of the group's selected
 * spans' anywhere in the range, in [start, end) and the query's workspaces, meeting the filters on
 * `evaluation` (their name), each in the bucket of its own time; grouped by `evaluation`, the groups
 * are the evaluations' alone (spans have no name).
 */
import { expect } from 'vitest';
import {
  HARNESS_MEASURES,
  MEASURES,
  bucketStart,
  type AggregateQuery,
  type AggregateRow,
  type Dimension,
  type Measure,
  type MetricPointRow,
  type SpanDimension,
  type SpanRow,
  type ToolUsageQuery,
  type ToolUsageRow,
} from '../../src/store/trace-port.ts';
import { compareGroups, compareValues } from '../../src/store/group-order.ts';
import { EVALUATION_MEASURES, type EvaluationRow } from '../../src/store/evaluation-row.ts';

const dimValue = (s: SpanRow, d: SpanDimension) => (d === 'user' ? s.user : s[d]);

/** Whether `value(key)` meets every filter of `q` on the dimensions `value` answers (undefined: not its filter). */
function meets(q: AggregateQuery, value: (key: Dimension) => string | number | null | undefined): boolean {
  for (const f of q.filters) {
    const v = value(f.key);
    if (v === undefined) continue;
    if (f.op === 'exists' && v === null) return false;
    if (f.op === 'not_exists' && v !== null) return false;
    if (f.op === 'eq' && v !== f.values[0]) return false;
    if (f.op === 'neq' && v === f.values[0]) return false;
    if (f.op === 'in' && (v === null || !f.values.includes(v))) return false;
  }
  return true;
}

function nearestRank(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
}

const matches = (s: SpanRow, q: AggregateQuery) => meets(q, (d) => (d === 'evaluation' ? undefined : dimValue(s, d)));
const named = (e: EvaluationRow, q: AggregateQuery) => meets(q, (d) => (d === 'evaluation' ? e.name : undefined));

/** A group's (or bucket's) spans and the metric points and evaluations attributed to it. */
interface Cell {
  spans: SpanRow[];
  points: MetricPointRow[];
  evaluations: EvaluationRow[];
}

/** The mean of the scores given, null without one. */
function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, v) => a + v, 0) / values.length;
}

/** `m` over `spans`; the harness and evaluation measures count the points and evaluations attributed to them. */
export function measure(
  spans: SpanRow[],
  m: Measure,
  points: readonly MetricPointRow[] = [],
  evaluations: readonly EvaluationRow[] = [],
): number | null {
  const distinct = (f: (s: SpanRow) => string | null) => new Set(spans.map(f).filter((v) => v !== null)).size;
  const invocations = spans.filter((s) => s.category === 'skill_invocation');
  const errorRate = invocations.length === 0 ? null : invocations.filter((s) => s.is_error).length / invocations.length;
  const tokens = spans.reduce((a, s) => a + s.tokens, 0);
  const traces = distinct((s) => s.trace_id);
  switch (m) {
    case 'sessions':
      return distinct((s) => s.session);
    case 'traces':
      return traces;
    case 'spans':
      return spans.length;
    case 'skill_invocations':
      return invocations.length;
    case 'tool_calls':
      return spans.filter((s) => s.category === 'tool_call').length;
    case 'tokens':
      return tokens;
    case 'cache_read_tokens':
      return spans.reduce((a, s) => a + s.cache_read_tokens, 0);
    case 'cache_creation_tokens':
      return spans.reduce((a, s) => a + s.cache_creation_tokens, 0);
    case 'active_users':
      return distinct((s) => s.user);
    case 'error_rate':
      return errorRate;
    case 'success_rate':
      return errorRate === null ? null : 1 - errorRate;
    case 'tokens_per_trace':
      return traces === 0 ? null : tokens / traces;
    case 'cost':
      return spans.reduce((a, s) => a + s.cost, 0);
    case 'latency_p50':
      return nearestRank(
        invocations.map((s) => s.duration_ms),
        0.5,
      );
    case 'latency_p90':
      return nearestRank(
        invocations.map((s) => s.duration_ms),
        0.9,
      );
    case 'latency_p99':
      return nearestRank(
        invocations.map((s) => s.duration_ms),
        0.99,
      );
    case 'lines_added':
    case 'lines_removed':
    case 'commits':
    case 'pull_requests':
    case 'active_time':
      return points.filter((p) => p.metric === m).reduce((a, p) => a + p.value, 0);
    case 'evaluation_score':
      return mean(evaluations.flatMap((e) => (e.score === null ? [] : [e.score])));
    case 'evaluation_pass_rate':
      return mean(evaluations.flatMap((e) => (e.passed === null ? [] : [e.passed ? 1 : 0])));
  }
}

const isEvaluationMeasure = (m: string) => (EVALUATION_MEASURES as readonly string[]).includes(m);

/** The rows an engine must return for `q` over `all` spans, metric `points` and `evaluations`, in a canonical order. */
export function reference(
  all: SpanRow[],
  q: AggregateQuery,
  points: readonly MetricPointRow[] = [],
  evaluations: readonly EvaluationRow[] = [],
): AggregateRow[] {
  const asked = [
    ...q.measures,
    ...(q.top ?? []).map((r) => r.by).filter((by) => (MEASURES as readonly string[]).includes(by)),
  ];
  const byName = q.groupBy.includes('evaluation');
  if ((byName || q.filters.some((f) => f.key === 'evaluation')) && !asked.every(isEvaluationMeasure))
    throw new Error('the evaluation dimension groups and filters the evaluation measures only');
  const spanDims = q.groupBy.filter((d): d is SpanDimension => d !== 'evaluation');
  const subject = q.subject;
  // A trace belongs to a skill when one of its invocations names it; to an agent when any span does.
  const ofSubject = (s: SpanRow) =>
    'agent' in subject
      ? s.agent === subject.agent
      : s.category === 'skill_invocation' &&
        s.skill === subject.skill &&
        (subject.skillVersion === undefined || s.skill_version === subject.skillVersion);
  const subjectTraces = new Set(all.filter((s) => s.org_id === q.orgId && ofSubject(s)).map((s) => s.trace_id));
  const selected = all.filter(
    (s) =>
      s.org_id === q.orgId &&
      subjectTraces.has(s.trace_id) &&
      s.start_s >= q.startS &&
      s.start_s < q.endS &&
      q.workspaceIds.includes(s.workspace_id) &&
      matches(s, q),
  );
  const cells = new Map<string, Cell>();
  const cell = (key: string) => {
    let c = cells.get(key);
    if (c === undefined) cells.set(key, (c = { spans: [], points: [], evaluations: [] }));
    return c;
  };
  const keysOf = (g: unknown[], time: number) => [
    ...(q.bucket === undefined || q.groupBy.length > 0 ? [JSON.stringify([g, null])] : []),
    ...(q.bucket !== undefined ? [JSON.stringify([g, bucketStart(time, q.bucket)])] : []),
  ];
  const sessions = new Map<string, { g: unknown[]; ids: Set<string> }>();
  // Per group of span dimensions: its values and the (workspace, trace) of its spans.
  const traces = new Map<string, { values: Partial<Record<Dimension, unknown>>; ids: Set<string> }>();
  for (const s of selected) {
    const g = spanDims.map((d) => dimValue(s, d));
    const gk = JSON.stringify(g);
    if (!byName) {
      for (const key of keysOf(g, s.start_s)) cell(key).spans.push(s);
      if (!sessions.has(gk)) sessions.set(gk, { g, ids: new Set() });
      if (s.session !== null) sessions.get(gk)?.ids.add(`${s.workspace_id}|${s.session}`);
    }
    if (!traces.has(gk))
      traces.set(gk, { values: Object.fromEntries(spanDims.map((d, i) => [d, g[i]])), ids: new Set() });
    traces.get(gk)?.ids.add(`${s.workspace_id}|${s.trace_id}`);
  }
  // Metric points make rows (a bucket with points and no spans) only for a query that sums them.
  const sumsPoints = [...q.measures, ...(q.top ?? []).map((r) => r.by)].some((m) =>
    (HARNESS_MEASURES as readonly string[]).includes(m),
  );
  const inRange = points.filter(
    (p) =>
      sumsPoints &&
      p.org_id === q.orgId &&
      p.time_s >= q.startS &&
      p.time_s < q.endS &&
      q.workspaceIds.includes(p.workspace_id),
  );
  for (const { g, ids } of sessions.values())
    for (const p of inRange)
      if (ids.has(`${p.workspace_id}|${p.session}`)) for (const key of keysOf(g, p.time_s)) cell(key).points.push(p);
  // Evaluations make rows only for a query that counts them, as points do.
  const candidates = evaluations.filter(
    (e) =>
      asked.some(isEvaluationMeasure) &&
      e.org_id === q.orgId &&
      e.time_s >= q.startS &&
      e.time_s < q.endS &&
      q.workspaceIds.includes(e.workspace_id) &&
      named(e, q),
  );
  for (const { values, ids } of traces.values())
    for (const e of candidates)
      if (ids.has(`${e.workspace_id}|${e.trace_id}`)) {
        const g = q.groupBy.map((d) => (d === 'evaluation' ? e.name : values[d]));
        for (const key of keysOf(g, e.time_s)) cell(key).evaluations.push(e);
      }
  if (q.groupBy.length === 0 && q.bucket === undefined && cells.size === 0) cell(JSON.stringify([[], null]));
  const kept = q.groupBy.length > 0 ? keptGroups(cells, q) : null;
  return [...cells]
    .filter(([key]) => kept === null || kept.has(JSON.stringify((JSON.parse(key) as [unknown, unknown])[0])))
    .map(([key, c]) => {
      const [g, bucket] = JSON.parse(key) as [(string | number | null)[], number | null];
      return {
        groups: Object.fromEntries(q.groupBy.map((d, i) => [d, g[i] ?? null])),
        bucket,
        values: Object.fromEntries(q.measures.map((m) => [m, measure(c.spans, m, c.points, c.evaluations)])),
      };
    });
}

type GroupKey = (string | number | null)[];

/**
 * The groups `top` and `onlyGroups` keep (JSON of their values in groupBy order), or null when
 * neither is given. A ranking sorts the groups by the measure over each group's whole range (its
 * bucket-null spans) or by a group value, in its direction with nulls last, then by compareGroups,
 * and keeps the first `limit`; a group is kept when some ranking keeps it and onlyGroups lists it.
 */
function keptGroups(groups: Map<string, Cell>, q: AggregateQuery): Set<string> | null {
  if (q.top === undefined && q.onlyGroups === undefined) return null;
  const whole = [...groups]
    .map(([key, c]) => [JSON.parse(key) as [GroupKey, number | null], c] as const)
    .filter(([[, bucket]]) => bucket === null)
    .map(([[g], c]) => ({
      key: JSON.stringify(g),
      values: Object.fromEntries(q.groupBy.map((d, i) => [d, g[i] ?? null])),
      cell: c,
    }));
  let kept = new Set(whole.map((w) => w.key));
  if (q.top !== undefined) {
    const ranked = new Set<string>();
    for (const r of q.top) {
      const sign = r.direction === 'desc' ? -1 : 1;
      const value = (w: (typeof whole)[number]) =>
        (MEASURES as readonly string[]).includes(r.by)
          ? measure(w.cell.spans, r.by as Measure, w.cell.points, w.cell.evaluations)
          : (w.values[r.by as Dimension] ?? null);
      const order = [...whole].sort((a, b) => {
        const va = value(a);
        const vb = value(b);
        const byValue = va === null || vb === null ? compareValues(va, vb) : compareValues(va, vb) * sign;
        return byValue || compareGroups(a.values, b.values, q.groupBy);
      });
      for (const w of order.slice(0, r.limit)) ranked.add(w.key);
    }
    kept = new Set([...kept].filter((k) => ranked.has(k)));
  }
  if (q.onlyGroups !== undefined) {
    const only = q.onlyGroups;
    const listed = (w: (typeof whole)[number]) =>
      only.some((g) => q.groupBy.every((d) => compareValues(g[d] ?? null, w.values[d] ?? null) === 0));
    kept = new Set(whole.filter((w) => kept.has(w.key) && listed(w)).map((w) => w.key));
  }
  return kept;
}

function canonical(rows: AggregateRow[]): AggregateRow[] {
  return [...rows].sort((a, b) =>
    JSON.stringify([a.groups, a.bucket]).localeCompare(JSON.stringify([b.groups, b.bucket])),
  );
}

/**
 * Same groups and buckets, and every value equal up to floating-point summation order (sums of
 * costs depend on the order an engine adds them): relative difference at most 1e-9.
 */
export function expectSameRows(actual: AggregateRow[], expected: AggregateRow[]): void {
  const a = canonical(actual);
  const e = canonical(expected);
  expect(a.map((r) => [r.groups, r.bucket])).toEqual(e.map((r) => [r.groups, r.bucket]));
  a.forEach((row, i) => {
    const want = e[i] as AggregateRow;
    expect(Object.keys(row.values).sort()).toEqual(Object.keys(want.values).sort());
    for (const [m, v] of Object.entries(want.values)) {
      const got = row.values[m as keyof typeof row.values];
      if (v === null) expect(got ?? null, `${JSON.stringify(row.groups)} ${row.bucket} ${m}`).toBeNull();
      else
        expect(
          Math.abs((got as number) - v),
          `${JSON.stringify(row.groups)} ${row.bucket} ${m}: ${got} vs ${v}`,
        ).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(v)));
    }
  });
}

/** Tool usage as DESIGN §8 defines it, span by span: one row per group with at least one call, by group. */
export function toolUsageReference(all: SpanRow[], q: ToolUsageQuery): ToolUsageRow[] {
  const rows: ToolUsageRow[] = [];
  for (const group of [...new Set(q.tools.map((t) => t.group))].sort((a, b) => a - b)) {
    const entries = q.tools.filter((t) => t.group === group);
    const calls = all.filter(
      (s) =>
        s.org_id === q.orgId &&
        s.category === 'tool_call' &&
        q.workspaceIds.includes(s.workspace_id) &&
        (q.sinceS === null || s.start_s >= q.sinceS) &&
        entries.some((e) => e.tool === s.tool && e.server === s.mcp),
    );
    if (calls.length === 0) continue;
    rows.push({
      group,
      calls: calls.length,
      errors: calls.filter((s) => s.is_error).length,
      p95LatencyMs: nearestRank(
        calls.map((s) => s.duration_ms),
        0.95,
      ) as number,
      lastCalledS: Math.max(...calls.map((s) => s.start_s)),
    });
  }
  return rows;
}
