/**
 * The group rankings of the trace store contract (AggregateQuery `top` and `onlyGroups`): every
 * engine keeps exactly the groups of trace-reference.ts, in the one order of trace-port.ts. The
 * hand-made spans of `rankedSpans` tie at the limits on purpose: equal counts, sums and ratios,
 * null group values and null ratios, text whose code-point order differs from a locale's and from
 * the order its values were first stored in (DuckDB's codes), versions whose numeric order differs
 * from their text's.
 */
import { describe, expect, it } from 'vitest';
import type {
  AggregateQuery,
  AggregateRow,
  Dimension,
  GroupRanking,
  SpanRow,
  TraceStore,
} from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { expectSameRows, reference } from './trace-reference.ts';

const END = Date.UTC(2026, 10, 1) / 1000;
const DAY0 = END - 5 * 86400;

/**
 * Eight traces of skill sk-r (org-r). By tool, spans / invocations / errors are: zeta 1/0/0,
 * Gamma 3/0/0, beta 3/2/1, alpha 3/2/1, épsilon 3/1/0, delta 2/2/0, none 3/1/1; so spans (and
 * tokens and cost, equal per span) tie five ways at 3, error_rate ties at 0.5 and at 0 and is null
 * for zeta and Gamma. Versions of the invocations: 2, 10, 9, 10, 2, 9, 1, 10; children have none.
 */
export function rankedSpans(): SpanRow[] {
  const traces: [string | null, boolean, (string | null)[], number][] = [
    ['beta', true, ['zeta'], 2],
    ['beta', false, ['Gamma'], 10],
    ['alpha', true, ['Gamma'], 9],
    ['alpha', false, ['Gamma', 'beta'], 10],
    ['épsilon', false, ['alpha', 'épsilon'], 2],
    ['delta', false, ['épsilon'], 9],
    ['delta', false, [null], 1],
    [null, true, [null], 10],
  ];
  const rows: SpanRow[] = [];
  traces.forEach(([tool, error, children, version], t) => {
    const traceId = `feed${t}`.padEnd(32, '0');
    const common = {
      org_id: 'org-r',
      workspace_id: 'ws-r',
      trace_id: traceId,
      name: 'x',
      duration_ms: 10 * (t + 1),
      harness: 'h-r',
      skill: 'sk-r',
      user: `u${t % 3}`,
      session: `s${t % 4}`,
      tokens: 10,
      cost: 0.25,
    };
    const start = DAY0 + (t % 3) * 86400 + 3600;
    rows.push(
      spanRow(0, {
        ...common,
        span_id: `${t}a`.padEnd(16, '0'),
        start_s: start,
        category: 'skill_invocation',
        tool,
        skill_version: version,
        model: t % 2 === 0 ? 'm-b' : 'M-a',
        is_error: error,
      }),
    );
    children.forEach((child, c) =>
      rows.push(
        spanRow(0, {
          ...common,
          span_id: `${t}b${c}`.padEnd(16, '0'),
          parent_span_id: `${t}a`.padEnd(16, '0'),
          start_s: start + 60 + c * 86400,
          category: 'tool_call',
          tool: child,
          skill_version: null,
          model: c === 0 ? null : 'm-b',
          is_error: false,
        }),
      ),
    );
  });
  return rows;
}

const rank = (by: GroupRanking['by'], direction: 'asc' | 'desc', limit: number): GroupRanking => ({
  by,
  direction,
  limit,
});

/** The distinct groups of rows, as JSON, sorted. */
const groupsOf = (rows: AggregateRow[]) => [...new Set(rows.map((r) => JSON.stringify(r.groups)))].sort();
const tools = (...values: (string | null)[]) => values.map((tool) => JSON.stringify({ tool })).sort();

export function rankingContract(store: () => TraceStore, spans: SpanRow[]): void {
  describe('group rankings (top) and group lists (onlyGroups)', () => {
    const r: AggregateQuery = {
      orgId: 'org-r',
      subject: { skill: 'sk-r' },
      startS: DAY0,
      endS: END,
      workspaceIds: ['ws-r'],
      filters: [],
      groupBy: ['tool'],
      measures: ['spans', 'error_rate', 'tokens', 'cost'],
    };
    const same = async (q: AggregateQuery) => {
      const rows = await store().aggregate(q);
      expectSameRows(rows, reference(spans, q));
      return rows;
    };

    it('breaks ties at the limit by the group values, by code point, nulls last', async () => {
      expect(groupsOf(await same({ ...r, top: [rank('spans', 'desc', 2)] }))).toEqual(tools('Gamma', 'alpha'));
      expect(groupsOf(await same({ ...r, top: [rank('spans', 'desc', 4)] }))).toEqual(
        tools('Gamma', 'alpha', 'beta', 'épsilon'),
      );
      for (const limit of [1, 3, 5, 6, 7, 100]) await same({ ...r, top: [rank('spans', 'desc', limit)] });
      for (const limit of [1, 2, 3]) await same({ ...r, top: [rank('spans', 'asc', limit)] });
      for (const m of ['tokens', 'cost'] as const) await same({ ...r, top: [rank(m, 'desc', 3)] });
    });

    it('ranks null values of a measure last in both directions', async () => {
      expect(groupsOf(await same({ ...r, top: [rank('error_rate', 'desc', 2)] }))).toEqual(tools(null, 'alpha'));
      expect(groupsOf(await same({ ...r, top: [rank('error_rate', 'desc', 4)] }))).toEqual(
        tools(null, 'alpha', 'beta', 'delta'),
      );
      expect(groupsOf(await same({ ...r, top: [rank('error_rate', 'asc', 5)] }))).toEqual(
        tools(null, 'alpha', 'beta', 'delta', 'épsilon'),
      );
      expect(groupsOf(await same({ ...r, top: [rank('error_rate', 'asc', 6)] }))).toEqual(
        tools(null, 'Gamma', 'alpha', 'beta', 'delta', 'épsilon'),
      );
      for (const m of ['success_rate', 'latency_p50', 'tokens_per_trace', 'sessions', 'active_users'] as const) {
        for (const direction of ['asc', 'desc'] as const) await same({ ...r, top: [rank(m, direction, 3)] });
      }
    });

    it('ranks by a measure it does not return', async () => {
      const rows = await same({ ...r, measures: ['tokens'], top: [rank('error_rate', 'desc', 2)] });
      expect(groupsOf(rows)).toEqual(tools(null, 'alpha'));
      expect(Object.keys(rows[0]?.values ?? {})).toEqual(['tokens']);
    });

    it('ranks by a group value: text by code point, versions numerically, nulls last', async () => {
      expect(groupsOf(await same({ ...r, top: [rank('tool', 'asc', 3)] }))).toEqual(tools('Gamma', 'alpha', 'beta'));
      expect(groupsOf(await same({ ...r, top: [rank('tool', 'desc', 2)] }))).toEqual(tools('épsilon', 'zeta'));
      await same({ ...r, top: [rank('tool', 'desc', 7)] });
      const byVersion: AggregateQuery = { ...r, groupBy: ['skill_version'] };
      expect(groupsOf(await same({ ...byVersion, top: [rank('skill_version', 'asc', 3)] }))).toEqual(
        [1, 2, 9].map((v) => JSON.stringify({ skill_version: v })),
      );
      expect(groupsOf(await same({ ...byVersion, top: [rank('skill_version', 'desc', 2)] }))).toEqual(
        [10, 9].map((v) => JSON.stringify({ skill_version: v })).sort(),
      );
      await same({ ...byVersion, top: [rank('spans', 'desc', 2)] });
      // A dimension outside group_by ranks every group equal: the tie-break alone decides.
      await same({ ...r, top: [rank('model', 'desc', 3)] });
    });

    it('keeps no group at limit 0 or with no ranking, and the union of several rankings', async () => {
      expect(await same({ ...r, top: [rank('spans', 'desc', 0)] })).toEqual([]);
      expect(await same({ ...r, top: [] })).toEqual([]);
      const rows = await same({
        ...r,
        top: [rank('spans', 'desc', 2), rank('error_rate', 'desc', 2), rank('tool', 'desc', 1)],
      });
      expect(groupsOf(rows)).toEqual(tools('Gamma', 'alpha', null, 'épsilon'));
      await same({ ...r, top: [rank('spans', 'asc', 1), rank('spans', 'asc', 3)] });
    });

    it('ranks groups of several dimensions, null values included', async () => {
      const multi: AggregateQuery = { ...r, groupBy: ['model', 'tool'] };
      for (const limit of [1, 2, 3, 4, 6, 9]) {
        await same({ ...multi, top: [rank('spans', 'desc', limit)] });
        await same({ ...multi, top: [rank('error_rate', 'asc', limit)] });
        await same({ ...multi, top: [rank('tool', 'asc', limit), rank('model', 'desc', 1)] });
      }
    });

    it('ranks a grouped time series by its totals and keeps every bucket row of a kept group', async () => {
      const series: AggregateQuery = {
        ...r,
        bucket: 'day',
        measures: ['spans', 'traces', 'error_rate', 'latency_p90', 'sessions'],
      };
      const rows = await same({ ...series, top: [rank('spans', 'desc', 2)] });
      expect(groupsOf(rows)).toEqual(tools('Gamma', 'alpha'));
      expect(
        rows
          .filter((row) => row.groups.tool === 'Gamma')
          .map((row) => row.bucket)
          .sort(),
      ).toEqual([DAY0, DAY0 + 86400, DAY0 + 2 * 86400, null].sort());
      for (const limit of [0, 1, 3, 4, 5]) await same({ ...series, top: [rank('error_rate', 'desc', limit)] });
      await same({ ...series, top: [rank('traces', 'asc', 2), rank('tool', 'desc', 1)] });
      await same({ ...series, groupBy: ['model', 'tool'], top: [rank('latency_p90', 'desc', 3)] });
      await same({ ...series, bucket: 'week', groupBy: ['skill_version'], top: [rank('sessions', 'desc', 2)] });
    });

    it('keeps only the listed groups: null values, values no span has, several dimensions', async () => {
      for (const bucket of [undefined, 'day'] as const) {
        const q: AggregateQuery = { ...r, ...(bucket !== undefined ? { bucket } : {}) };
        expect(
          groupsOf(await same({ ...q, onlyGroups: [{ tool: null }, { tool: 'alpha' }, { tool: 'no-such-tool' }] })),
        ).toEqual(tools(null, 'alpha'));
        expect(await same({ ...q, onlyGroups: [{ tool: 'no-such-tool' }] })).toEqual([]);
        expect(await same({ ...q, onlyGroups: [] })).toEqual([]);
        await same({
          ...q,
          groupBy: ['skill_version'],
          onlyGroups: [{ skill_version: null }, { skill_version: 10 }, { skill_version: 99 }],
        });
        const multi: AggregateQuery = { ...q, groupBy: ['model', 'tool'] };
        // (m-b, Gamma) has no span although both values do: only exact groups are kept.
        const rows = await same({
          ...multi,
          onlyGroups: [
            { model: null, tool: 'Gamma' },
            { model: 'm-b', tool: 'Gamma' },
            { model: 'M-a', tool: 'beta' },
            { model: null, tool: null },
          ],
        });
        expect(groupsOf(rows)).toEqual(
          [
            { model: null, tool: 'Gamma' },
            { model: 'M-a', tool: 'beta' },
            { model: null, tool: null },
          ]
            .map((g) => JSON.stringify(g))
            .sort(),
        );
        await same({
          ...multi,
          onlyGroups: [
            { model: 'no-such-model', tool: 'alpha' },
            { model: 'm-b', tool: null },
          ],
        });
      }
    });

    it('combines top and onlyGroups: a group must rank within a limit among all groups and be listed', async () => {
      const rows = await same({
        ...r,
        top: [rank('spans', 'desc', 3)],
        onlyGroups: [{ tool: 'alpha' }, { tool: 'delta' }, { tool: null }],
      });
      expect(groupsOf(rows)).toEqual(tools('alpha'));
      await same({
        ...r,
        bucket: 'day',
        top: [rank('error_rate', 'desc', 4)],
        onlyGroups: [{ tool: 'delta' }, { tool: null }, { tool: 'zeta' }],
      });
      await same({
        ...r,
        groupBy: ['model', 'tool'],
        top: [rank('spans', 'desc', 5)],
        onlyGroups: [
          { model: null, tool: 'Gamma' },
          { model: 'm-b', tool: 'beta' },
        ],
      });
    });

    it('ignores top and onlyGroups without group_by', async () => {
      const rows = await same({ ...r, groupBy: [], top: [rank('spans', 'desc', 0)], onlyGroups: [] });
      expect(rows).toHaveLength(1);
      await same({ ...r, groupBy: [], bucket: 'day', top: [], onlyGroups: [{}] });
    });
  });
}

/** Rankings over the generated demo spans of the contract (no hand-made ties): tables and series. */
export function demoRankingCases(base: AggregateQuery): [string, AggregateQuery][] {
  const dims: Dimension[][] = [['model'], ['tool'], ['harness', 'user'], ['skill_version']];
  return dims.flatMap(
    (groupBy) =>
      [
        [
          `table by ${groupBy.join(', ')}`,
          { ...base, groupBy, top: [rank('traces', 'desc', 3), rank('latency_p99', 'asc', 2)] },
        ],
        [
          `series by ${groupBy.join(', ')}`,
          {
            ...base,
            groupBy,
            bucket: 'week',
            measures: ['traces', 'tokens', 'error_rate'],
            top: [rank('error_rate', 'desc', 2), rank(groupBy[0] as Dimension, 'asc', 2)],
          },
        ],
      ] as [string, AggregateQuery][],
  );
}
