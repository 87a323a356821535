/**
 * Spans for the sealing tests of both engines (duckdb-sealing, postgres-sealing): demo traces of
 * two skills, plus traces that invoke both or one skill in two versions, and traces whose children
 * fall on the next day; the queries every step of those tests is checked with; and the checks
 * both engines share.
 */
import { expect } from 'vitest';
import { MEASURES, type AggregateQuery, type SpanRow, type TraceStore } from '../../src/store/trace-port.ts';
import { prng } from '../../src/shared/prng.ts';
import { demoSpans } from '../../src/seed/demo-traces.ts';
import { expectSameRows, reference } from '../contract/trace-reference.ts';

const END = Date.UTC(2026, 10, 1) / 1000;
export const ORG = 'org-1';
const WORKSPACES = ['ws-1', 'ws-2'];

/** Demo traces of two skills, plus traces that invoke both, or one skill in two versions. */
export function spans(seed: number): SpanRow[] {
  const rows: SpanRow[] = [];
  for (const b of demoSpans({
    orgId: ORG,
    skills: [
      { id: 'sk-a', workspaceId: 'ws-1' },
      { id: 'sk-b', workspaceId: 'ws-2' },
    ],
    users: ['u1', 'u2', 'u3'],
    spans: 1500,
    endS: END,
    days: 10,
    seed,
  }))
    rows.push(...b);
  const extra: SpanRow[] = [];
  const invocations = rows.filter((r) => r.category === 'skill_invocation');
  invocations.forEach((inv, i) => {
    if (i % 9 === 0)
      extra.push({
        ...inv,
        span_id: `${inv.span_id.slice(0, 12)}b000`,
        skill: inv.skill === 'sk-a' ? 'sk-b' : 'sk-a',
        duration_ms: inv.duration_ms + 7,
      });
    if (i % 11 === 0)
      extra.push({
        ...inv,
        span_id: `${inv.span_id.slice(0, 12)}c000`,
        skill_version: (inv.skill_version ?? 1) + 1,
        is_error: !inv.is_error,
      });
  });
  // Every fourth trace has children on the next day: traces that day buckets split.
  const traces = [...new Set(rows.map((r) => r.trace_id))];
  const later = new Set(traces.filter((_, i) => i % 4 === 0));
  const shifted = rows.map((r) =>
    r.category !== 'skill_invocation' && later.has(r.trace_id) && r.start_s < END - 2 * 86400
      ? { ...r, start_s: r.start_s + 86400 }
      : r,
  );
  return [...shifted, ...extra];
}

/** Spans as a release before the provider, agent and cache token columns stored them: without them. */
export function beforeLaterColumns(rows: SpanRow[]): SpanRow[] {
  return rows.map((r) => ({ ...r, provider: null, agent: null, cache_read_tokens: 0, cache_creation_tokens: 0 }));
}

export function shuffle<T>(xs: T[], rnd: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export const base: AggregateQuery = {
  orgId: ORG,
  subject: { skill: 'sk-a' },
  startS: END - 10 * 86400,
  endS: END,
  workspaceIds: WORKSPACES,
  filters: [],
  groupBy: [],
  measures: [...MEASURES],
};
export const QUERIES: AggregateQuery[] = [
  base,
  { ...base, subject: { skill: 'sk-b' }, groupBy: ['model'] },
  { ...base, subject: { skill: 'sk-a', skillVersion: 2 }, groupBy: ['harness'] },
  { ...base, subject: { skill: 'sk-b', skillVersion: 1 }, groupBy: ['skill', 'skill_version'] },
  {
    ...base,
    bucket: 'day',
    groupBy: ['tool'],
    measures: ['traces', 'tokens', 'error_rate', 'latency_p99', 'sessions'],
  },
  // Shapes PostgreSQL sums from its rollups (one dimension, filters on it, no distinct sessions or users).
  {
    ...base,
    bucket: 'day',
    groupBy: ['model'],
    measures: ['traces', 'tokens', 'error_rate', 'latency_p99', 'spans', 'tool_calls', 'latency_p50'],
  },
  {
    ...base,
    startS: base.startS + 5 * 3600,
    endS: base.endS - 7 * 3600,
    groupBy: ['tool'],
    filters: [{ key: 'tool', op: 'neq', values: ['get_file'] }],
    measures: ['traces', 'tokens', 'success_rate', 'latency_p90'],
  },
  { ...base, subject: { skill: 'sk-b' }, bucket: 'week', measures: ['traces', 'spans', 'tokens_per_trace'] },
  { ...base, startS: base.startS + 86400 + 1, measures: ['traces', 'latency_p99', 'skill_invocations'] },
];

/**
 * A trace whose skill is named after its spans were sealed counts once, sealed or not, and a second
 * version of the same skill in the same trace keeps it one trace with each span once.
 */
export async function expectLateSkillCountedOnce(store: TraceStore, seal: () => Promise<unknown>): Promise<void> {
  const invocation = spans(7).find((r) => r.category === 'skill_invocation' && r.skill === 'sk-a') as SpanRow;
  const children = spans(7).filter((r) => r.trace_id === invocation.trace_id && r.category !== 'skill_invocation');
  await store.insertSpans(children);
  await seal();
  const q: AggregateQuery = {
    ...base,
    startS: invocation.start_s - 86400,
    endS: invocation.start_s + 3 * 86400,
    measures: ['traces', 'spans'],
  };
  expect((await store.aggregate(q))[0]?.values).toEqual({ traces: 0, spans: 0 });
  await store.insertSpans([invocation]);
  const stored = [...children, invocation];
  expect((await store.aggregate(q))[0]?.values).toEqual({ traces: 1, spans: stored.length });
  await seal();
  expect((await store.aggregate(q))[0]?.values).toEqual({ traces: 1, spans: stored.length });
  const v9 = { ...invocation, span_id: 'f'.repeat(16), skill_version: 9 };
  await store.insertSpans([v9]);
  stored.push(v9);
  for (const sealNow of [false, true]) {
    if (sealNow) await seal();
    expectSameRows(await store.aggregate(q), reference(stored, q));
    const v9q = { ...q, subject: { skill: 'sk-a', skillVersion: 9 } };
    expectSameRows(await store.aggregate(v9q), reference(stored, v9q));
    expect((await store.aggregate(q))[0]?.values).toEqual({ traces: 1, spans: stored.length });
  }
}

/**
 * Stores the spans of `seed` shuffled, in batches of random size, sealing after some batches and
 * checking every QUERY against the reference after others (each with its chance), then once at the
 * end unsealed and once sealed.
 */
export async function expectExactInAnyOrder(
  store: TraceStore,
  seed: number,
  options: { checkChance: number; seal: () => Promise<unknown> },
): Promise<void> {
  const rnd = prng(seed);
  const all = shuffle(spans(seed), rnd);
  const exact = async (stored: SpanRow[]) => {
    for (const q of QUERIES) expectSameRows(await store.aggregate(q), reference(stored, q));
  };
  const stored: SpanRow[] = [];
  let checks = 0;
  for (let i = 0; i < all.length;) {
    const batch = all.slice(i, i + 1 + Math.floor(rnd() * 400));
    i += batch.length;
    await store.insertSpans(batch);
    stored.push(...batch);
    if (rnd() < 0.4) await options.seal();
    if (rnd() < options.checkChance) {
      await exact(stored);
      checks++;
    }
  }
  await exact(stored);
  await options.seal();
  await exact(stored);
  expect(checks).toBeGreaterThan(0);
}
