/**
 * Skills: every skill the user can read, with its invocations, error rate and p99 latency over the
 * last 7 days, from one GraphQL query (queries/skills-overview.graphql); each links to its analytics.
 */
import { graphql } from '../api.ts';
import { el, empty, loading, problemView } from '../dom.ts';
import { formatValue } from '../format.ts';
import type { SkillsOverviewQuery, SkillsOverviewQueryVariables } from '../generated/operations.ts';
import QUERY from '../queries/skills-overview.graphql';

const DAY = 86_400;

export async function skillsPage(main: HTMLElement): Promise<void> {
  main.replaceChildren(el('h1', {}, 'Skills'), loading());
  const end = Math.ceil(Date.now() / 1000 / 3600) * 3600;
  const variables: SkillsOverviewQueryVariables = {
    stats: {
      startTimeUnixSeconds: end - 7 * DAY,
      endTimeUnixSeconds: end,
      requestType: 'SCALAR',
      queries: [
        { name: 'invocations', measure: 'SKILL_INVOCATIONS' },
        { name: 'error_rate', measure: 'ERROR_RATE' },
        { name: 'p99', measure: 'LATENCY_P99' },
      ],
    },
  };
  const answer = await graphql<SkillsOverviewQuery>(QUERY, variables);
  if (answer.problem !== undefined) {
    main.replaceChildren(el('h1', {}, 'Skills'), problemView(answer.problem));
    return;
  }
  const rows = answer.data.viewer.workspaces.flatMap((w) =>
    w.artifacts.edges.map(({ node }) => {
      const stats = 'traceStats' in node ? node.traceStats.data : undefined;
      const results = stats !== undefined && 'results' in stats ? stats.results : [];
      const values = new Map(results.map((r) => [r.queryName, r] as const));
      const name = 'displayName' in node ? (node.displayName ?? node.name) : node.name;
      return { id: node.id, name, workspace: w.displayName, values };
    }),
  );
  rows.sort(
    (a, b) =>
      (b.values.get('invocations')?.value ?? 0) - (a.values.get('invocations')?.value ?? 0) ||
      a.name.localeCompare(b.name),
  );
  if (rows.length === 0) {
    main.replaceChildren(el('h1', {}, 'Skills'), empty('No skill is readable with this sign-in.'));
    return;
  }
  const cell = (r: (typeof rows)[number], q: string) => {
    const v = r.values.get(q);
    return el('td', { className: 'num', 'data-query': q }, formatValue(v?.value ?? null, v?.unit ?? null));
  };
  const table = el(
    'table',
    { className: 'skills' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}, 'Skill'),
        el('th', {}, 'Workspace'),
        el('th', { className: 'num' }, 'Invocations (7 d)'),
        el('th', { className: 'num' }, 'Error rate'),
        el('th', { className: 'num' }, 'p99'),
      ),
    ),
    el(
      'tbody',
      {},
      ...rows.map((r) =>
        el(
          'tr',
          { 'data-skill': r.id },
          el('td', {}, el('a', { href: `/console/skills/${encodeURIComponent(r.id)}`, 'data-link': true }, r.name)),
          el('td', {}, r.workspace),
          cell(r, 'invocations'),
          cell(r, 'error_rate'),
          cell(r, 'p99'),
        ),
      ),
    ),
  );
  main.replaceChildren(
    el('h1', {}, 'Skills'),
    el('p', { className: 'hint' }, `${rows.length} skill(s), last 7 days`),
    table,
  );
}
