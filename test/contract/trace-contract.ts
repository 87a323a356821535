/**
 * The trace store contract: every engine runs these unchanged. Expected values come from
 * trace-reference.ts (plain TypeScript over the same generated spans), never from the engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SPAN_DIMENSIONS,
  MEASURES,
  HARNESS_MEASURES,
  bucketStart,
  type AggregateQuery,
  type MetricPointRow,
  type SpanRow,
  type ToolUsageQuery,
  type TraceStore,
} from '../../src/store/trace-port.ts';
import { demoSpans } from '../../src/seed/demo-traces.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { demoRankingCases, rankedSpans, rankingContract } from './trace-ranking-contract.ts';
import { expectSameRows, reference, toolUsageReference } from './trace-reference.ts';

export const END = Date.UTC(2026, 10, 1) / 1000;
const SKILLS = [
  { id: 'sk-a', workspaceId: 'ws-1' },
  { id: 'sk-b', workspaceId: 'ws-2' },
  { id: 'sk-c', workspaceId: 'ws-1' },
];

export function generated(): SpanRow[] {
  const rows: SpanRow[] = [];
  for (const b of demoSpans({
    orgId: 'org-1',
    skills: SKILLS,
    users: ['u1', 'u2', 'u3', 'u4'],
    spans: 4000,
    endS: END,
    days: 40,
    seed: 99,
  }))
    rows.push(...b);
  for (const b of demoSpans({
    orgId: 'org-2',
    skills: [{ id: 'sk-a', workspaceId: 'ws-9' }],
    users: ['x'],
    spans: 500,
    endS: END,
    days: 40,
    seed: 5,
  }))
    rows.push(...b);
  // Every fifth trace has children a day or a week after its invocation: traces across buckets.
  const traces = [...new Set(rows.filter((r) => r.start_s < END - 8 * 86400).map((r) => r.trace_id))];
  const shift = new Map(traces.filter((_, i) => i % 5 === 0).map((t, i) => [t, i % 2 === 0 ? 86400 : 7 * 86400]));
  return rows.map((r, i) =>
    withProviderAgentCache(
      r.category !== 'skill_invocation' && shift.has(r.trace_id)
        ? { ...r, start_s: r.start_s + (shift.get(r.trace_id) as number) }
        : r,
      i,
    ),
  );
}

/**
 * Provider, agent and cache tokens for span `i` (the demo spans have none): model calls get the
 * provider of their model and cache counts, agents are a registry id, a name as sent, or none.
 */
function withProviderAgentCache(r: SpanRow, i: number): SpanRow {
  const model = r.category === 'model_call';
  return {
    ...r,
    provider: r.model === null ? null : r.model.startsWith('claude') ? 'anthropic' : 'openai',
    agent: [null, 'agent-0001', 'planner', 'agent-0002'][i % 4] as string | null,
    cache_read_tokens: model ? Math.floor(r.tokens / 3) : 0,
    cache_creation_tokens: model && i % 5 === 0 ? 100 + (i % 7) : 0,
  };
}

/** Hand-made spans at the edges of a range and across a year boundary. */
function edges(): SpanRow[] {
  const base = spanRow(0, {
    org_id: 'org-e',
    workspace_id: 'ws-e',
    name: 'x',
    duration_ms: 10,
    category: 'skill_invocation',
    skill: 'sk-e',
    skill_version: 1,
    tokens: 1,
  });
  const at = (iso: string, id: string, extra: Partial<SpanRow> = {}) => ({
    ...base,
    trace_id: id.padEnd(32, '0'),
    span_id: id.padEnd(16, '0'),
    start_s: Date.parse(iso) / 1000,
    ...extra,
  });
  return [
    at('2026-12-28T00:00:00Z', 'a1'), // Monday
    at('2026-12-31T23:59:59Z', 'a2', { is_error: true, duration_ms: 30 }),
    at('2027-01-01T00:00:00Z', 'a3', { duration_ms: 20 }),
    at('2027-01-03T23:59:59Z', 'a4'), // Sunday: same ISO week as 2026-12-28
    at('2027-01-04T00:00:00Z', 'a5'), // Monday: next week
  ];
}

/** Tool calls of org-t: a built-in tool without an MCP server, and one name on two servers. */
function toolCalls(): SpanRow[] {
  const base = edges()[0] as SpanRow;
  const call = (n: number, tool: string, mcp: string | null, extra: Partial<SpanRow> = {}): SpanRow => ({
    ...base,
    org_id: 'org-t',
    workspace_id: n % 3 === 0 ? 'ws-t2' : 'ws-t1',
    trace_id: (0xf000 + n).toString(16).padEnd(32, '0'),
    span_id: (0xf000 + n).toString(16).padEnd(16, '0'),
    category: 'tool_call',
    skill: null,
    skill_version: null,
    tool,
    mcp,
    start_s: END - n * 3600,
    duration_ms: 10 + ((n * 37) % 100),
    is_error: n % 4 === 0,
    ...extra,
  });
  return [
    ...Array.from({ length: 30 }, (_, n) => call(n, 'web_search', null)),
    ...Array.from({ length: 20 }, (_, n) => call(100 + n, 'search', 'srv-a')),
    ...Array.from({ length: 10 }, (_, n) => call(200 + n, 'search', 'srv-b')),
    call(300, 'search', 'srv-a', { category: 'model_call' }), // not a tool call
    call(301, "x' OR '1'='1", 'srv-a'),
    // Text as sent, whatever the engine's bulk format: tab, newline, carriage return, backslash, \N.
    call(302, 'tab\tnew\nline\rback\\slash \\N', 'srv-\t'),
  ];
}

/**
 * Harness metric points for the sessions of `spans`: each session's first span gives the time and
 * workspace; some points fall a day or a week later (other buckets), some in a workspace no query
 * reads, some before any range. Decoys: the same sessions in another organization and in another
 * readable workspace (a caller who may write there must not add to a session of this one), and
 * sessions no span has.
 */
export function metricPoints(spans: readonly SpanRow[]): MetricPointRow[] {
  const first = new Map<string, SpanRow>();
  for (const s of spans)
    if (s.session !== null && !first.has(`${s.org_id}|${s.session}`)) first.set(`${s.org_id}|${s.session}`, s);
  const points: MetricPointRow[] = [];
  [...first.values()].forEach((s, i) => {
    const at = (n: number, extra: Partial<MetricPointRow> = {}): MetricPointRow => ({
      org_id: s.org_id,
      key: `point-${i}-${n}`,
      workspace_id: s.workspace_id,
      session: s.session as string,
      metric: HARNESS_MEASURES[(i + n) % HARNESS_MEASURES.length] as MetricPointRow['metric'],
      time_s: s.start_s + 60 * n,
      value: ((i * 7 + n * 3) % 40) + 1,
      ...extra,
    });
    points.push(at(0), at(1), at(2, { value: 0.5 }));
    if (i % 4 === 0) points.push(at(3, { time_s: s.start_s + 86400 }));
    if (i % 6 === 0) points.push(at(4, { time_s: s.start_s + 7 * 86400 }));
    if (i % 5 === 0) points.push(at(5, { workspace_id: 'ws-elsewhere' }));
    if (i % 7 === 0) points.push(at(6, { time_s: s.start_s - 400 * 86400 }));
    if (i % 3 === 0) points.push(at(7, { org_id: 'org-decoy' }), at(8, { session: `${s.session}-none` }));
    if (i % 2 === 0) points.push(at(9, { workspace_id: s.workspace_id === 'ws-1' ? 'ws-2' : 'ws-1', value: 1000 }));
  });
  return points;
}

/**
 * The statistics query most cases start from: every measure of skill sk-a of org-1 over the 30 days
 * to END in the workspaces ws-1 and ws-2, ungrouped; `fields` change what a case is about.
 */
export function skillQuery(fields: Partial<AggregateQuery> = {}): AggregateQuery {
  return {
    orgId: 'org-1',
    subject: { skill: 'sk-a' },
    startS: END - 30 * 86400,
    endS: END,
    workspaceIds: ['ws-1', 'ws-2'],
    filters: [],
    groupBy: [],
    measures: [...MEASURES],
    ...fields,
  };
}

export interface ContractOptions {
  /** Runs after each stored chunk of 1,000 spans (an engine's maintenance, e.g. DuckDB sealing). */
  afterChunk?: (store: TraceStore, chunk: number) => Promise<void>;
}

export function traceContract(engine: string, open: () => Promise<TraceStore>, options: ContractOptions = {}): void {
  describe(`trace store contract: ${engine}`, () => {
    let store: TraceStore;
    const spans = [...generated(), ...edges(), ...rankedSpans(), ...toolCalls()];
    const points = metricPoints(spans);
    beforeAll(async () => {
      store = await open();
      for (let i = 0; i < spans.length; i += 1000) {
        await store.insertSpans(spans.slice(i, i + 1000));
        await store.insertMetricPoints(points.slice((i / 1000) * 500, (i / 1000 + 1) * 500));
        await options.afterChunk?.(store, i / 1000);
      }
      await store.insertMetricPoints(points.slice(Math.ceil(spans.length / 1000) * 500));
    });
    afterAll(async () => {
      await store.close();
    });

    const base = skillQuery();
    const same = async (q: AggregateQuery) => expectSameRows(await store.aggregate(q), reference(spans, q, points));

    it('stores every span durably and counts them', async () => {
      expect(await store.countSpans()).toBe(spans.length);
      await store.ping();
    });

    it('computes every measure without grouping', async () => {
      const rows = await store.aggregate(base);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.values.traces).toBeGreaterThan(50);
      for (const m of HARNESS_MEASURES) expect(rows[0]?.values[m], m).toBeGreaterThan(0);
      await same(base);
    });

    it('sums harness metric points by the sessions of each group, in the bucket of their own time', async () => {
      await same({ ...base, groupBy: ['user'], measures: [...HARNESS_MEASURES] });
      await same({ ...base, bucket: 'day', measures: ['lines_added', 'commits'] });
      await same({ ...base, bucket: 'week', groupBy: ['tool'], measures: ['active_time', 'traces'] });
      await same({
        ...base,
        groupBy: ['model'],
        measures: ['pull_requests'],
        top: [{ by: 'lines_removed', direction: 'desc', limit: 3 }],
      });
      await same({ ...base, filters: [{ key: 'model', op: 'eq', values: ['gpt-4o'] }], measures: ['lines_added'] });
      // Sessions of other organizations and points outside the query's workspaces never count.
      await same({ ...base, orgId: 'org-2', workspaceIds: ['ws-9'], measures: [...HARNESS_MEASURES] });
      await same({ ...base, workspaceIds: ['ws-2'], groupBy: ['harness'], measures: ['lines_added'] });
    });

    it.each(SPAN_DIMENSIONS.map((d) => [d]))('computes every measure grouped by %s', async (d) => {
      await same({ ...base, groupBy: [d] });
    });

    it.each([['provider' as const], ['agent' as const]])(
      'counts, filters and sums cache tokens by %s, also in the shapes other dimensions sum from rollups',
      async (d) => {
        const rows = await store.aggregate({ ...base, groupBy: [d], measures: ['spans', 'traces'] });
        expect(rows.filter((r) => r.groups[d] !== null).length).toBeGreaterThanOrEqual(2);
        await same({ ...base, groupBy: [d], measures: ['spans', 'traces', 'tokens'] });
        await same({ ...base, groupBy: [d], bucket: 'day', measures: ['traces', 'cache_read_tokens'] });
        const value = d === 'provider' ? 'anthropic' : 'planner';
        await same({ ...base, filters: [{ key: d, op: 'eq', values: [value] }], groupBy: [d], measures: ['traces'] });
        await same({ ...base, filters: [{ key: d, op: 'not_exists', values: [] }], measures: ['spans'] });
        await same({ ...base, groupBy: ['model', d], measures: ['cache_creation_tokens', 'cost'] });
        const [total] = await store.aggregate({ ...base, measures: ['cache_read_tokens', 'cache_creation_tokens'] });
        expect(total?.values.cache_read_tokens).toBeGreaterThan(0);
        expect(total?.values.cache_creation_tokens).toBeGreaterThan(0);
      },
    );

    it('groups by several dimensions at once', async () => {
      await same({ ...base, groupBy: ['model', 'harness', 'user'] });
    });

    it('applies every filter operator', async () => {
      await same({ ...base, filters: [{ key: 'model', op: 'eq', values: ['gpt-4o'] }] });
      await same({ ...base, filters: [{ key: 'model', op: 'neq', values: ['gpt-4o'] }], groupBy: ['model'] });
      await same({ ...base, filters: [{ key: 'mcp', op: 'in', values: ['github', 'jira'] }], groupBy: ['tool'] });
      await same({ ...base, filters: [{ key: 'tool', op: 'exists', values: [] }] });
      await same({
        ...base,
        filters: [
          { key: 'tool', op: 'not_exists', values: [] },
          { key: 'skill_version', op: 'in', values: [1, 2] },
        ],
      });
      await same({ ...base, filters: [{ key: 'mcp', op: 'in', values: [] }] });
      // Values no stored span has: none match eq, all match neq, in keeps the known ones.
      await same({ ...base, filters: [{ key: 'model', op: 'neq', values: ['no-such-model'] }], groupBy: ['model'] });
      await same({
        ...base,
        filters: [{ key: 'tool', op: 'in', values: ['no-such-tool', 'create_issue'] }],
        groupBy: ['tool'],
      });
      await same({ ...base, filters: [{ key: 'harness', op: 'eq', values: ['no-such-harness'] }] });
    });

    it('narrows to a skill version and to workspaces, and never crosses organizations', async () => {
      await same({ ...base, subject: { skill: 'sk-a', skillVersion: 2 } });
      await same({ ...base, subject: { skill: 'sk-b' } });
      await same({ ...base, workspaceIds: ['ws-2'] });
      const none = await store.aggregate({ ...base, workspaceIds: [] });
      expect(none[0]?.values.traces).toBe(0);
      const other = await store.aggregate({ ...base, orgId: 'org-2', workspaceIds: ['ws-9'] });
      expect(other[0]?.values.traces).toBeGreaterThan(0);
      await same({ ...base, orgId: 'org-2', workspaceIds: ['ws-1', 'ws-2', 'ws-9'] });
    });

    it('buckets by day and by ISO week, with per-group totals', async () => {
      await same({ ...base, bucket: 'day', measures: ['traces', 'tokens', 'error_rate', 'latency_p99'] });
      await same({
        ...base,
        bucket: 'week',
        groupBy: ['model'],
        measures: ['traces', 'tokens', 'error_rate', 'latency_p99'],
      });
    });

    it.each(MEASURES.map((m) => [m]))('gives a grouped time series of %s alone, buckets and totals', async (m) => {
      await same({ ...base, bucket: 'day', groupBy: ['harness'], measures: [m] });
    });

    it('keeps [start, end): a span at start counts, one at end does not', async () => {
      const q: AggregateQuery = {
        ...base,
        orgId: 'org-e',
        subject: { skill: 'sk-e' },
        workspaceIds: ['ws-e'],
        startS: Date.parse('2026-12-31T23:59:59Z') / 1000,
        endS: Date.parse('2027-01-04T00:00:00Z') / 1000,
      };
      const [row] = await store.aggregate(q);
      expect(row?.values.spans).toBe(3); // a2, a3, a4; a5 sits exactly at end
      await same(q);
    });

    it('puts week buckets across the year boundary on Mondays', async () => {
      const q: AggregateQuery = {
        ...base,
        orgId: 'org-e',
        subject: { skill: 'sk-e' },
        workspaceIds: ['ws-e'],
        startS: Date.parse('2026-12-20T00:00:00Z') / 1000,
        endS: Date.parse('2027-01-10T00:00:00Z') / 1000,
        bucket: 'week',
        measures: ['spans', 'error_rate', 'latency_p50'],
      };
      const rows = (await store.aggregate(q))
        .filter((r) => r.bucket !== null)
        .sort((a, b) => (a.bucket as number) - (b.bucket as number));
      expect(
        rows.map((r) => [new Date((r.bucket as number) * 1000).toISOString().slice(0, 10), r.values.spans]),
      ).toEqual([
        ['2026-12-28', 4],
        ['2027-01-04', 1],
      ]);
      expect(rows[0]?.values.error_rate).toBe(0.25);
      expect(rows[0]?.values.latency_p50).toBe(10);
      expect(bucketStart(Date.parse('2027-01-03T23:59:59Z') / 1000, 'week')).toBe(
        Date.parse('2026-12-28T00:00:00Z') / 1000,
      );
      await same(q);
    });

    it('answers an empty range with zero counts and null ratios and percentiles', async () => {
      const rows = await store.aggregate({ ...base, startS: END + 86400, endS: END + 2 * 86400 });
      expect(rows).toHaveLength(1);
      const v = rows[0]?.values ?? {};
      for (const m of [
        'sessions',
        'traces',
        'spans',
        'skill_invocations',
        'tool_calls',
        'tokens',
        'active_users',
        'cost',
      ] as const)
        expect(v[m]).toBe(0);
      for (const m of [
        'error_rate',
        'success_rate',
        'tokens_per_trace',
        'latency_p50',
        'latency_p90',
        'latency_p99',
      ] as const)
        expect(v[m]).toBeNull();
      expect(
        await store.aggregate({ ...base, groupBy: ['model'], startS: END + 86400, endS: END + 2 * 86400 }),
      ).toEqual([]);
    });

    it('treats filter values as data, not SQL', async () => {
      const rows = await store.aggregate({ ...base, filters: [{ key: 'model', op: 'eq', values: ["x' OR '1'='1"] }] });
      expect(rows[0]?.values.spans).toBe(0);
    });

    it.each(demoRankingCases(base))('keeps the top groups of the generated spans: %s', async (_name, q) => {
      await same(q);
    });

    rankingContract(() => store, spans);

    describe('tool usage', () => {
      const demoTools = [
        ...new Set(
          spans.filter((r) => r.org_id === 'org-1' && r.category === 'tool_call').map((r) => `${r.tool}|${r.mcp}`),
        ),
      ]
        .sort()
        .map((k) => k.split('|') as [string, string]);
      const cases: [string, ToolUsageQuery][] = [
        [
          'each demo tool its own group, every call',
          {
            orgId: 'org-1',
            workspaceIds: ['ws-1', 'ws-2'],
            sinceS: null,
            tools: demoTools.map(([tool, server], group) => ({ group, tool, server })),
          },
        ],
        [
          'tools grouped by server, a window, one workspace; a group of unknown tools has no row',
          {
            orgId: 'org-1',
            workspaceIds: ['ws-1'],
            sinceS: END - 10 * 86400,
            tools: [
              ...demoTools.map(([tool, server]) => ({ group: server === 'github' ? 0 : 1, tool, server })),
              { group: 1, tool: 'no_such_tool', server: 'jira' },
              { group: 2, tool: 'no_such_tool', server: null },
              { group: 3, tool: 'create_issue', server: 'jira' },
            ],
          },
        ],
        [
          'one tool in two groups counts for both; another organization never counts',
          {
            orgId: 'org-2',
            workspaceIds: ['ws-9', 'ws-1'],
            sinceS: null,
            tools: demoTools.flatMap(([tool, server]) => [
              { group: 0, tool, server },
              { group: 5, tool, server },
            ]),
          },
        ],
        [
          'a tool without a server matches only calls without one; one name on two servers',
          {
            orgId: 'org-t',
            workspaceIds: ['ws-t1', 'ws-t2'],
            sinceS: null,
            tools: [
              { group: 0, tool: 'web_search', server: null },
              { group: 1, tool: 'web_search', server: 'srv-a' },
              { group: 2, tool: 'search', server: 'srv-a' },
              { group: 3, tool: 'search', server: 'srv-b' },
              { group: 4, tool: 'search', server: null },
              { group: 5, tool: "x' OR '1'='1", server: 'srv-a' },
              { group: 6, tool: 'tab\tnew\nline\rback\\slash \\N', server: 'srv-\t' },
            ],
          },
        ],
        [
          'a window and one workspace of org-t',
          {
            orgId: 'org-t',
            workspaceIds: ['ws-t2'],
            sinceS: END - 15 * 3600,
            tools: [
              { group: 0, tool: 'web_search', server: null },
              { group: 1, tool: 'search', server: 'srv-a' },
            ],
          },
        ],
      ];
      it.each(cases)('%s', async (_name, q) => {
        const expected = toolUsageReference(spans, q);
        expect(expected.length, 'the case has calls').toBeGreaterThan(0);
        expect(await store.toolUsage(q)).toEqual(expected);
      });

      it('no entries or no workspaces: no rows', async () => {
        const q = cases[0]?.[1] as ToolUsageQuery;
        expect(await store.toolUsage({ ...q, tools: [] })).toEqual([]);
        expect(await store.toolUsage({ ...q, workspaceIds: [] })).toEqual([]);
      });

      it('rejects a query whose signal is already aborted', async () => {
        const controller = new AbortController();
        controller.abort();
        await expect(store.toolUsage(cases[0]?.[1] as ToolUsageQuery, controller.signal)).rejects.toThrow();
      });
    });

    it('rejects a query whose signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(store.aggregate(base, controller.signal)).rejects.toThrow();
    });
  });
}
