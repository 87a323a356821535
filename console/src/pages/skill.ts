/**
 * Skill analytics: time series of invocations, traces, error rate, latency p50/p90/p99, tokens and
 * cost for a range, bucket, version and group-by (agents that declare the skill shown by name),
 * with the previous period overlaid and the skill's insights marked at their windows; the same
 * numbers as a table and as CSV (analytics.ts). One REST call (operation 1, time_series with
 * compare) answers the charts, one the insights of the range, the skill's head one GraphQL query.
 */
import { graphql, rest } from '../api.ts';
import { el, loading } from '../dom.ts';
import type { SkillHeadQuery } from '../generated/operations.ts';
import SKILL from '../queries/skill.graphql';
import { analyticsView, applier, PANEL, seriesRequest, viewOf, type AnalyticsSpec } from './analytics.ts';
import { insightsOf } from './insights.ts';
import { namesById, type GroupNames, type StatsAnswer } from './series.ts';

const SPEC: AnalyticsSpec = {
  panels: [
    { title: 'Invocations', queries: [{ name: 'invocations', measure: 'skill_invocations' }] },
    PANEL.traces,
    PANEL.errorRate,
    PANEL.latency,
    { title: 'Tokens', queries: [{ name: 'tokens', measure: 'tokens' }], insights: ['token_efficiency'] },
    PANEL.cost,
  ],
  groups: ['', 'model', 'provider', 'agent', 'harness', 'tool', 'mcp', 'user', 'command', 'skill_version'],
  version: true,
};

export async function skillPage(main: HTMLElement, skillId: string, query: URLSearchParams): Promise<void> {
  const view = viewOf(query, SPEC);
  main.replaceChildren(loading());
  const version = view.version !== '' ? `?version_ordinal=${view.version}` : '';
  const base = `/skill/v1/skills/${encodeURIComponent(skillId)}`;
  const [head, stats, insights] = await Promise.all([
    graphql<SkillHeadQuery>(SKILL, { id: skillId }),
    rest<StatsAnswer>('POST', `${base}/traces/stats/query${version}`, seriesRequest(view, SPEC)),
    insightsOf(`${base}/insights`, view),
  ]);
  const skill = head.data?.skill;
  // Agents that declare they use the skill, by name (the agent dimension holds registry ids).
  const names: GroupNames = {
    agent: namesById((skill?.usedBy ?? []).map((a) => ({ id: a.id, name: a.displayName ?? a.name }))),
  };
  main.replaceChildren(
    el('h1', {}, skill?.displayName ?? skill?.name ?? skillId),
    skill?.workspace
      ? el('p', { className: 'hint' }, `${skill.id} in ${skill.workspace.displayName}, version ${skill.versionOrdinal}`)
      : '',
    ...analyticsView(SPEC, view, applier(query), stats, names, `${skillId}-stats.csv`, insights),
  );
}
