/**
 * Statistics of an agent's traces (AggregateQuery subject `{ agent }`) on every engine: the spans
 * of every trace any of whose spans names the agent, whatever the other spans name (another agent,
 * none, a skill or no skill), never another organization's. Expected values come from
 * trace-reference.ts over the same spans, never from the engine. The data: the contract's generated
 * skill traces (their spans name agent-0001, planner, agent-0002 or none, span by span) and traces
 * with no skill whose root names agent-0001 or agent-0009 while its model and tool calls name none,
 * the root stored in a later write than its children.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SPAN_DIMENSIONS,
  HARNESS_MEASURES,
  MEASURES,
  type AggregateQuery,
  type SpanRow,
  type TraceStore,
} from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';
import { END, generated, metricPoints, type ContractOptions } from './trace-contract.ts';
import { expectSameRows, reference } from './trace-reference.ts';

/** Agent traces without a skill in org-1: a root naming the agent, a model call and a tool call naming none. */
function agentOnlyTraces(): { children: SpanRow[]; roots: SpanRow[] } {
  const children: SpanRow[] = [];
  const roots: SpanRow[] = [];
  for (let t = 0; t < 60; t++) {
    const common = {
      org_id: 'org-1',
      workspace_id: t % 3 === 0 ? 'ws-2' : 'ws-1',
      trace_id: `a9e7${t.toString(16).padStart(4, '0')}`.padEnd(32, '7'),
      harness: 'custom-agent',
      user: `u${(t % 4) + 1}`,
      session: `agent-sess-${t % 7}`,
      start_s: END - (2 + (t % 35)) * 86400 - 3600 * (t % 5),
    };
    const id = (n: number) => `${t.toString(16).padStart(4, '0')}${n}`.padEnd(16, 'b');
    roots.push(
      spanRow(0, {
        ...common,
        span_id: id(0),
        name: 'invoke_agent',
        agent: t % 4 === 3 ? 'agent-0009' : 'agent-0001',
        duration_ms: 100 + t,
        is_error: t % 6 === 0,
      }),
    );
    children.push(
      spanRow(0, {
        ...common,
        span_id: id(1),
        parent_span_id: id(0),
        name: 'chat',
        category: 'model_call',
        model: t % 2 === 0 ? 'gpt-4o' : 'claude-sonnet-4',
        provider: t % 2 === 0 ? 'openai' : 'anthropic',
        tokens: 1000 + t,
        cost: 0.01 * t,
        cache_read_tokens: 10 * t,
        // A day later for some: the trace crosses day buckets.
        start_s: common.start_s + (t % 5 === 0 ? 86400 : 1),
      }),
      spanRow(0, {
        ...common,
        span_id: id(2),
        parent_span_id: id(0),
        name: 'tools/call search',
        category: 'tool_call',
        tool: 'search',
        mcp: t % 2 === 0 ? 'github' : null,
        is_error: t % 5 === 1,
        start_s: common.start_s + 2,
      }),
    );
  }
  return { children, roots };
}

/** Every measure of agent-0001's traces of org-1 over the 30 days to END in ws-1 and ws-2; cases change `fields`. */
function agentQuery(fields: Partial<AggregateQuery> = {}): AggregateQuery {
  return {
    orgId: 'org-1',
    subject: { agent: 'agent-0001' },
    startS: END - 30 * 86400,
    endS: END,
    workspaceIds: ['ws-1', 'ws-2'],
    filters: [],
    groupBy: [],
    measures: [...MEASURES],
    ...fields,
  };
}

export function agentContract(engine: string, open: () => Promise<TraceStore>, options: ContractOptions = {}): void {
  describe(`trace store contract, an agent's traces: ${engine}`, () => {
    let store: TraceStore;
    const { children, roots } = agentOnlyTraces();
    // The roots go last: each agent-only trace's mapping is written after its other spans.
    const spans = [...children, ...generated(), ...roots];
    const points = metricPoints(spans);
    const base = agentQuery();
    const same = async (q: AggregateQuery) => expectSameRows(await store.aggregate(q), reference(spans, q, points));

    beforeAll(async () => {
      store = await open();
      for (let i = 0; i < spans.length; i += 1000) {
        await store.insertSpans(spans.slice(i, i + 1000));
        await options.afterChunk?.(store, i / 1000);
      }
      await store.insertMetricPoints(points);
    });
    afterAll(async () => {
      await store.close();
    });

    it('computes every measure over the spans of the traces any span of which names the agent', async () => {
      const [row] = await store.aggregate(base);
      expect(row?.values.traces).toBeGreaterThan(100);
      // Spans that name another agent or none count, in the agent's traces.
      const other = await store.aggregate({ ...base, groupBy: ['agent'], measures: ['spans'] });
      expect(other.filter((r) => r.groups.agent !== 'agent-0001').length).toBeGreaterThanOrEqual(3);
      for (const m of HARNESS_MEASURES) expect(row?.values[m], m).toBeGreaterThan(0);
      await same(base);
    });

    it('counts traces without a skill, whose only span naming the agent was stored last', async () => {
      const q = { ...base, subject: { agent: 'agent-0009' }, startS: END - 40 * 86400 };
      const [row] = await store.aggregate({ ...q, measures: ['traces', 'spans', 'skill_invocations'] });
      expect(row?.values).toEqual({ traces: 15, spans: 45, skill_invocations: 0 });
      await same(q);
      await same({ ...q, groupBy: ['model'], bucket: 'day', measures: ['traces', 'tokens', 'cache_read_tokens'] });
    });

    it.each(SPAN_DIMENSIONS.map((d) => [d]))('computes every measure grouped by %s', async (d) => {
      await same({ ...base, groupBy: [d] });
    });

    it.each(MEASURES.map((m) => [m]))('gives a day series of %s by agent, buckets and totals', async (m) => {
      await same({ ...base, bucket: 'day', groupBy: ['agent'], measures: [m] });
    });

    it('buckets by day and by week, ungrouped and grouped', async () => {
      await same({ ...base, bucket: 'day', measures: ['traces', 'tokens', 'error_rate', 'latency_p99'] });
      await same({ ...base, bucket: 'week', groupBy: ['model'], measures: ['traces', 'spans', 'cost'] });
      await same({ ...base, bucket: 'week', groupBy: ['skill', 'tool'], measures: ['traces', 'lines_added'] });
    });

    it('applies filters, also on the agent and skill dimensions', async () => {
      await same({ ...base, filters: [{ key: 'agent', op: 'eq', values: ['planner'] }], groupBy: ['model'] });
      await same({ ...base, filters: [{ key: 'agent', op: 'not_exists', values: [] }] });
      await same({ ...base, filters: [{ key: 'skill', op: 'not_exists', values: [] }], groupBy: ['tool'] });
      await same({ ...base, filters: [{ key: 'skill', op: 'eq', values: ['sk-b'] }], groupBy: ['user'] });
      await same({ ...base, filters: [{ key: 'model', op: 'in', values: ['gpt-4o', 'no-such-model'] }] });
    });

    it('keeps the top groups and listed groups', async () => {
      await same({ ...base, groupBy: ['tool'], top: [{ by: 'spans', direction: 'desc', limit: 3 }] });
      await same({
        ...base,
        groupBy: ['model'],
        bucket: 'day',
        measures: ['traces', 'error_rate'],
        top: [{ by: 'traces', direction: 'asc', limit: 2 }],
      });
      await same({ ...base, groupBy: ['user'], onlyGroups: [{ user: 'u1' }, { user: 'u3' }, { user: 'nobody' }] });
    });

    it('names agents as sent, narrows to workspaces and never crosses organizations', async () => {
      await same({ ...base, subject: { agent: 'planner' } });
      await same({ ...base, workspaceIds: ['ws-2'], groupBy: ['harness'] });
      expect((await store.aggregate({ ...base, workspaceIds: [] }))[0]?.values.traces).toBe(0);
      // org-2 has spans naming agent-0001 too: only its own count for it, and never for org-1.
      const other = { ...base, orgId: 'org-2', workspaceIds: ['ws-1', 'ws-2', 'ws-9'] };
      expect((await store.aggregate(other))[0]?.values.traces).toBeGreaterThan(0);
      await same(other);
      expect((await store.aggregate({ ...base, workspaceIds: ['ws-9'] }))[0]?.values.traces).toBe(0);
      const unknown = { ...base, subject: { agent: 'no-such-agent' } };
      expect((await store.aggregate(unknown))[0]?.values.spans).toBe(0);
      await same(unknown);
    });

    it('rejects a query whose signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(store.aggregate(base, controller.signal)).rejects.toThrow();
    });
  });
}
