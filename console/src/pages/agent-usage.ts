/**
 * An agent's usage: the analytics of the traces it takes part in (analytics.ts: traces, skill
 * invocations, tool calls, error rate, latency, tokens with the prompt cache's part, cost, with the
 * previous period, its insights marked at their windows) and what it used over the same range, by
 * skill and by tool. Operation 1's request on the agent endpoint: one time series answers the
 * charts, one table each breakdown, the agent's insight list the markers; the agent's head is one
 * GraphQL query (the skills it declares show by name).
 */
import { graphql, rest, type Answer } from '../api.ts';
import { el, empty, loading, problemView } from '../dom.ts';
import { formatValue } from '../format.ts';
import type { AgentUsageHeadQuery } from '../generated/operations.ts';
import HEAD from '../queries/agent-usage.graphql';
import {
  analyticsView,
  PANEL,
  applier,
  numbersTable,
  seriesRequest,
  viewOf,
  type AnalyticsSpec,
  type View,
} from './analytics.ts';
import { agentHead } from './catalog.ts';
import { insightsOf } from './insights.ts';
import { namesById, tableText, type GroupNames, type StatsAnswer, type TableAnswer } from './series.ts';

const SPEC: AnalyticsSpec = {
  panels: [
    PANEL.traces,
    { title: 'Skill invocations', queries: [{ name: 'invocations', measure: 'skill_invocations' }] },
    { title: 'Tool calls', queries: [{ name: 'tool_calls', measure: 'tool_calls' }] },
    PANEL.errorRate,
    PANEL.latency,
    {
      title: 'Tokens',
      queries: [
        { name: 'tokens', measure: 'tokens' },
        { name: 'cache_read', measure: 'cache_read_tokens' },
        { name: 'cache_creation', measure: 'cache_creation_tokens' },
      ],
      insights: ['token_efficiency'],
    },
    PANEL.cost,
  ],
  groups: ['', 'model', 'provider', 'skill', 'tool', 'mcp', 'user', 'harness', 'command'],
  version: false,
};

/** The breakdowns: the spans naming a skill (a tool) in the range, by skill (by tool). */
const BREAKDOWNS = [
  {
    dimension: 'skill',
    title: 'Skills',
    queries: [
      { name: 'invocations', measure: 'skill_invocations' },
      { name: 'error_rate', measure: 'error_rate' },
      { name: 'latency_p90', measure: 'latency_p90' },
      { name: 'traces', measure: 'traces' },
    ],
  },
  {
    dimension: 'tool',
    title: 'Tools',
    queries: [
      { name: 'calls', measure: 'tool_calls' },
      { name: 'traces', measure: 'traces' },
    ],
  },
] as const;

function tableRequest(view: View, b: (typeof BREAKDOWNS)[number]): object {
  return {
    start_time_unix_seconds: view.start,
    end_time_unix_seconds: view.end,
    request_type: 'table',
    queries: b.queries.map((q) => ({
      ...q,
      group_by: [b.dimension],
      filters: [{ key: b.dimension, op: 'exists' }],
      limit: 20,
    })),
  };
}

function breakdown(
  b: (typeof BREAKDOWNS)[number],
  answer: Answer<TableAnswer>,
  names: GroupNames,
): (HTMLElement | string)[] {
  const title = el('h2', {}, `${b.title} over the range (top 20)`);
  if (answer.problem !== undefined) return [title, problemView(answer.problem)];
  const { header, rows } = tableText(answer.data, formatValue, names);
  return [
    title,
    rows.length === 0 ? empty(`No ${b.dimension} in this range.`) : numbersTable(`by-${b.dimension}`, header, rows),
  ];
}

export async function agentUsagePage(main: HTMLElement, agentId: string, query: URLSearchParams): Promise<void> {
  const view = viewOf(query, SPEC);
  main.replaceChildren(loading());
  const base = `/agent/v1/agents/${encodeURIComponent(agentId)}`;
  const path = `${base}/traces/stats/query`;
  const [head, stats, insights, ...tables] = await Promise.all([
    graphql<AgentUsageHeadQuery>(HEAD, { id: agentId }),
    rest<StatsAnswer>('POST', path, seriesRequest(view, SPEC)),
    insightsOf(`${base}/insights`, view),
    ...BREAKDOWNS.map((b) => rest<TableAnswer>('POST', path, tableRequest(view, b))),
  ]);
  const agent = head.data?.agent;
  const names: GroupNames = {
    skill: namesById((agent?.usedSkills ?? []).map((s) => ({ id: s.id, name: s.displayName ?? s.name }))),
  };
  main.replaceChildren(
    ...agentHead(agentId, agent, 'usage'),
    ...analyticsView(SPEC, view, applier(query), stats, names, `${agentId}-stats.csv`, insights),
    ...BREAKDOWNS.flatMap((b, i) => breakdown(b, tables[i] ?? { problem: { title: 'no answer' } }, names)),
  );
}
