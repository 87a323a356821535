/**
 * Catalog: agent search (strategy, sorts, paging) with profile images, each agent linked to its
 * profile (instructions, tools, relationships linked, versions) and its usage (agent-usage.ts).
 * GraphQL queries of queries/.
 */
import { graphql } from '../api.ts';
import { el, empty, loading, navigate, problemView } from '../dom.ts';
import type { AgentDetailQuery, AgentSearchQuery, AgentSearchQueryVariables } from '../generated/operations.ts';
import DETAIL from '../queries/agent.graphql';
import SEARCH from '../queries/agent-search.graphql';

const PAGE = 20;
const STRATEGIES = ['KEYWORD', 'PREFIX', 'EXACT'] as const;
const SORTS = { relevance: 'RELEVANCE', name: 'NAME', updated: 'UPDATED_AT' } as const;

function avatar(image: { contentType: string; base64: string } | null | undefined, name: string): HTMLElement {
  if (image == null || image.base64 === '')
    return el('span', { className: 'avatar empty' }, name.charAt(0).toUpperCase());
  return el('img', { className: 'avatar', alt: '', src: `data:${image.contentType};base64,${image.base64}` });
}

/** What the head of an agent's pages shows of it. */
interface HeadAgent {
  id: string;
  name: string;
  displayName: string | null;
  modelId: string | null;
  workspace: { id: string; displayName: string } | null;
  profileImage: { contentType: string; base64: string };
}

/**
 * The head of an agent's pages (its id until the agent is known): image, name, where it lives and
 * its model (`more` after them), and the links between its profile and its usage.
 */
export function agentHead(
  id: string,
  a: HeadAgent | null | undefined,
  current: 'profile' | 'usage',
  more = '',
): (HTMLElement | string)[] {
  const base = `/console/agents/${encodeURIComponent(id)}`;
  const tab = (which: 'profile' | 'usage', label: string, href: string) =>
    which === current
      ? el('span', { className: 'current', 'aria-current': 'page' }, label)
      : el('a', { href, 'data-link': true }, label);
  const name = a?.displayName ?? a?.name ?? id;
  return [
    el('div', { className: 'agent-head' }, avatar(a?.profileImage, name), el('h1', {}, name)),
    a
      ? el(
          'p',
          { className: 'hint' },
          `${a.id} in ${a.workspace?.displayName ?? a.workspace?.id ?? 'an unreadable workspace'} · model ${a.modelId ?? 'none'}${more}`,
        )
      : '',
    el('nav', { className: 'tabs' }, tab('profile', 'Profile', base), tab('usage', 'Usage', `${base}/usage`)),
  ];
}

export async function catalogPage(main: HTMLElement, query: URLSearchParams): Promise<void> {
  const text = query.get('q') ?? '';
  const strategy = STRATEGIES.find((s) => s === query.get('strategy')) ?? 'KEYWORD';
  const sort = (Object.keys(SORTS).find((k) => k === query.get('sort')) ?? 'relevance') as keyof typeof SORTS;
  const after = query.get('after');
  const input = el('input', { type: 'search', name: 'q', value: text, placeholder: 'search agents' });
  const strategySelect = el(
    'select',
    { name: 'strategy' },
    ...STRATEGIES.map((s) => el('option', { value: s, selected: s === strategy }, s.toLowerCase())),
  );
  const sortSelect = el(
    'select',
    { name: 'sort' },
    ...Object.keys(SORTS).map((s) => el('option', { value: s, selected: s === sort }, s)),
  );
  const form = el(
    'form',
    { className: 'controls' },
    input,
    strategySelect,
    sortSelect,
    el('button', { type: 'submit' }, 'Search'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams({ q: input.value, strategy: strategySelect.value, sort: sortSelect.value });
    navigate(`/console/catalog?${next.toString()}`);
  });
  main.replaceChildren(el('h1', {}, 'Agents'), form, loading());
  const variables: AgentSearchQueryVariables = {
    ...(text !== '' ? { query: text, strategy } : {}),
    sorts: [{ field: SORTS[sort], direction: sort === 'updated' ? 'DESC' : 'ASC' }],
    first: PAGE,
    ...(after !== null ? { after } : {}),
  };
  const answer = await graphql<AgentSearchQuery>(SEARCH, variables);
  if (answer.problem !== undefined) {
    main.replaceChildren(el('h1', {}, 'Agents'), form, problemView(answer.problem));
    return;
  }
  const { agentSearch } = answer.data;
  const list = el(
    'ul',
    { className: 'cards' },
    ...agentSearch.edges.map(({ node }) =>
      el(
        'li',
        { 'data-agent': node.id },
        avatar(node.profileImage, node.displayName ?? node.name),
        el(
          'div',
          {},
          el(
            'a',
            { href: `/console/agents/${encodeURIComponent(node.id)}`, 'data-link': true },
            node.displayName ?? node.name,
          ),
          el(
            'p',
            { className: 'hint' },
            `${node.id} · ${node.workspace?.displayName ?? ''} · ${node.modelId ?? 'no model'} · `,
            el(
              'a',
              { href: `/console/agents/${encodeURIComponent(node.id)}/usage`, 'data-link': true, className: 'usage' },
              'usage',
            ),
          ),
        ),
      ),
    ),
  );
  const more =
    agentSearch.pageInfo.hasNextPage && agentSearch.pageInfo.endCursor != null
      ? el(
          'a',
          {
            href: `/console/catalog?${new URLSearchParams({ ...Object.fromEntries(query), after: agentSearch.pageInfo.endCursor }).toString()}`,
            'data-link': true,
          },
          'Next page',
        )
      : '';
  main.replaceChildren(
    el('h1', {}, 'Agents'),
    form,
    el('p', { className: 'hint' }, `${agentSearch.totalCount.toLocaleString('en-US')} agent(s)`),
    agentSearch.edges.length === 0 ? empty('No agent matches.') : list,
    more,
  );
}

export async function agentPage(main: HTMLElement, id: string): Promise<void> {
  main.replaceChildren(loading());
  const answer = await graphql<AgentDetailQuery>(DETAIL, { id });
  if (answer.problem !== undefined || answer.data.agent === null) {
    main.replaceChildren(problemView(answer.problem ?? { title: 'Not found', detail: `agent ${id}` }));
    return;
  }
  const a = answer.data.agent;
  const link = (x: { id: string; name: string; kind: string }) =>
    x.kind === 'AGENT'
      ? el('a', { href: `/console/agents/${encodeURIComponent(x.id)}`, 'data-link': true }, x.name)
      : x.kind === 'SKILL'
        ? el('a', { href: `/console/skills/${encodeURIComponent(x.id)}`, 'data-link': true }, x.name)
        : el('span', {}, `${x.name} (${x.kind.toLowerCase()})`);
  const relations = [
    ...a.relationships.outgoing.map((r) => el('li', {}, `${r.relType.toLowerCase()} → `, link(r.to))),
    ...a.relationships.incoming.map((r) => el('li', {}, link(r.from), ` ${r.relType.toLowerCase()} → this agent`)),
  ];
  main.replaceChildren(
    ...agentHead(a.id, a, 'profile', ` · version ${a.versionOrdinal}`),
    el('h2', {}, 'Instructions'),
    el('pre', { className: 'instructions' }, a.instructions ?? '(none)'),
    el('h2', {}, 'Tools'),
    (a.tools ?? []).length === 0
      ? empty('No tool.')
      : el('ul', {}, ...(a.tools ?? []).map((t) => el('li', {}, `${t.name} (${t.kind})`))),
    el('h2', {}, 'Relationships'),
    relations.length === 0 ? empty('No relationship readable.') : el('ul', { className: 'relations' }, ...relations),
    el('h2', {}, 'Versions'),
    el(
      'ul',
      {},
      ...a.versions.map((v) =>
        el('li', {}, `${v.versionOrdinal}${v.versionLabel != null ? ` (${v.versionLabel})` : ''}, ${v.updatedAt}`),
      ),
    ),
  );
}
