/**
 * Tools: the MCP servers (mcp-servers.ts, a query of their own), the tool catalog (paged) and the
 * tool aggregate as a grouped table (group-by chosen in the URL), from one GraphQL query
 * (queries/tools.graphql).
 */
import { graphql } from '../api.ts';
import { el, empty, loading, navigate, problemView } from '../dom.ts';
import type { ToolGroupField, ToolsOverviewQuery } from '../generated/operations.ts';
import QUERY from '../queries/tools.graphql';
import { serversSection } from './mcp-servers.ts';

const FIELDS: Record<string, ToolGroupField> = {
  server: 'SERVER_ID',
  provider: 'PROVIDER_KIND',
  owner: 'OWNER',
  workspace: 'WORKSPACE_ID',
  status: 'ARTIFACT_STATUS',
};
const KEY: Record<string, 'serverId' | 'providerKind' | 'owner' | 'workspaceId' | 'artifactStatus'> = {
  server: 'serverId',
  provider: 'providerKind',
  owner: 'owner',
  workspace: 'workspaceId',
  status: 'artifactStatus',
};

export async function toolsPage(main: HTMLElement, query: URLSearchParams): Promise<void> {
  const group = Object.keys(FIELDS).find((k) => k === query.get('group')) ?? 'server';
  const after = query.get('after');
  /** This page's URL with `name` set to `value` (the other lists keep their place). */
  const withParam = (name: string, value: string) => {
    const next = new URLSearchParams(query);
    next.set(name, value);
    return `/console/tools?${next.toString()}`;
  };
  const servers = serversSection(query.get('servers_after'), (cursor) => withParam('servers_after', cursor));
  const select = el(
    'select',
    { name: 'group' },
    ...Object.keys(FIELDS).map((k) => el('option', { value: k, selected: k === group }, k)),
  );
  select.addEventListener('change', () => {
    navigate(`/console/tools?group=${select.value}`);
  });
  main.replaceChildren(el('h1', {}, 'Tools'), servers, loading());
  const answer = await graphql<ToolsOverviewQuery>(QUERY, {
    first: 50,
    groupBy: [FIELDS[group]],
    ...(after !== null ? { after } : {}),
  });
  if (answer.problem !== undefined) {
    main.replaceChildren(el('h1', {}, 'Tools'), servers, problemView(answer.problem));
    return;
  }
  const { tools, toolAggregate } = answer.data;
  const key = KEY[group] ?? 'serverId';
  const groups = el(
    'table',
    { className: 'groups' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}, group),
        el('th', { className: 'num' }, 'tools'),
        el('th', { className: 'num' }, 'servers'),
        el('th', {}, 'latest update'),
      ),
    ),
    el(
      'tbody',
      {},
      ...toolAggregate.edges.map(({ node }) =>
        el(
          'tr',
          {},
          el('td', {}, node.key[key] ?? '(none)'),
          el('td', { className: 'num' }, String(node.count)),
          el('td', { className: 'num' }, String(node.servers)),
          el('td', {}, node.latestUpdatedAt ?? '–'),
        ),
      ),
    ),
  );
  const list = el(
    'table',
    { className: 'tools' },
    el(
      'thead',
      {},
      el('tr', {}, el('th', {}, 'Tool'), el('th', {}, 'Server'), el('th', {}, 'Provider'), el('th', {}, 'Workspace')),
    ),
    el(
      'tbody',
      {},
      ...tools.edges.map(({ node }) =>
        el(
          'tr',
          { 'data-tool': node.id },
          el('td', {}, node.name),
          el('td', {}, node.serverId ?? '–'),
          el('td', {}, node.providerKind ?? '–'),
          el('td', {}, node.workspace?.displayName ?? '–'),
        ),
      ),
    ),
  );
  const next =
    tools.pageInfo.hasNextPage && tools.pageInfo.endCursor != null
      ? el('a', { href: withParam('after', tools.pageInfo.endCursor), 'data-link': true }, 'Next page')
      : '';
  main.replaceChildren(
    el('h1', {}, 'Tools'),
    servers,
    el('h2', {}, 'By group'),
    el('div', { className: 'controls' }, el('label', {}, 'group by ', select)),
    toolAggregate.edges.length === 0 ? empty('No tool.') : el('div', { className: 'scroll' }, groups),
    el('h2', {}, `Catalog (${tools.totalCount.toLocaleString('en-US')})`),
    tools.edges.length === 0 ? empty('No tool is readable.') : el('div', { className: 'scroll' }, list),
    next,
  );
}
