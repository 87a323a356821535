/**
 * Skill analytics: time series of invocations, traces, error rate, latency p50/p90/p99, tokens and
 * cost for a range, bucket, version and group-by (agents that declare the skill shown by name),
 * with the previous period overlaid; the same numbers as a table and as CSV (analytics.ts). One
 * REST call (operation 1, time_series with compare) answers the page, the skill's head one GraphQL
 * query.
 */
import { graphql, rest } from '../api.ts';
import { el, loading } from '../dom.ts';
import type { SkillHeadQuery } from '../generated/operations.ts';
import SKILL from '../queries/skill.graphql';
import { analyticsView, applier, PANEL, seriesRequest, viewOf, type AnalyticsSpec } from './analytics.ts';
import { namesById, type GroupNames, type StatsAnswer } from './series.ts';

const SPEC: AnalyticsSpec = {
  panels: [
    { title: 'Invocations', queries: [{ name: 'invocations', measure: 'skill_invocations' }] },
    PANEL.traces,
    PANEL.errorRate,
    PANEL.latency,
    { title: 'Tokens', queries: [{ name: 'tokens', measure: 'tokens' }] },
    PANEL.cost,
  ],
  groups: ['', 'model', 'provider', 'agent', 'harness', 'tool', 'mcp', 'user', 'command', 'skill_version'],
  version: true,
};

export async function skillPage(main: HTMLElement, skillId: string, query: URLSearchParams): Promise<void> {
  const view = viewOf(query, SPEC);
  main.replaceChildren(loading());
  const version = view.version !== '' ? `?version_ordinal=${view.version}` : '';
  const [head, stats] = await Promise.all([
    graphql<SkillHeadQuery>(SKILL, { id: skillId }),
    rest<StatsAnswer>(
      'POST',
      `/skill/v1/skills/${encodeURIComponent(skillId)}/traces/stats/query${version}`,
      seriesRequest(view, SPEC),
    ),
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
    ...analyticsView(SPEC, view, applier(query), stats, names, `${skillId}-stats.csv`),
  );
}
