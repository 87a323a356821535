/**
 * The MCP servers section of the Tools page: the readable servers by name (paged), each with its
 * latest version, status, tool count and usage from telemetry, from one GraphQL query
 * (queries/mcp-servers.graphql). It loads on its own, so the rest of the page never waits for it.
 */
import { graphql } from '../api.ts';
import { el, empty, loading, problemView } from '../dom.ts';
import { formatValue } from '../format.ts';
import type { McpServersOverviewQuery } from '../generated/operations.ts';
import QUERY from '../queries/mcp-servers.graphql';

/** The section, filled in when its answer arrives; `after` is the page's cursor, `nextHref` links the next page. */
export function serversSection(after: string | null, nextHref: (cursor: string) => string): HTMLElement {
  const section = el('section', { className: 'servers' }, el('h2', {}, 'MCP servers'), loading());
  void graphql<McpServersOverviewQuery>(QUERY, { first: 50, ...(after !== null ? { after } : {}) }).then((answer) => {
    const title = el('h2', {}, 'MCP servers');
    if (answer.problem !== undefined) {
      section.replaceChildren(title, problemView(answer.problem));
      return;
    }
    const { nodes, pageInfo } = answer.data.mcpServers;
    if (nodes.length === 0) {
      section.replaceChildren(title, empty('No MCP server is readable.'));
      return;
    }
    const days = nodes[0]?.usage.windowDays ?? 30;
    const table = el(
      'table',
      { className: 'servers' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', {}, 'Server'),
          el('th', {}, 'Title'),
          el('th', {}, 'Version'),
          el('th', {}, 'Status'),
          el('th', { className: 'num' }, 'Tools'),
          el('th', { className: 'num' }, `Calls (${days} d)`),
          el('th', { className: 'num' }, 'Error rate'),
          el('th', { className: 'num' }, 'p95'),
        ),
      ),
      el(
        'tbody',
        {},
        ...nodes.map((s) =>
          el(
            'tr',
            { 'data-server': s.id },
            el('td', {}, el('code', {}, s.name)),
            el('td', {}, s.title ?? '–'),
            el('td', {}, s.version),
            el('td', { className: `status ${s.status.toLowerCase()}` }, s.status.toLowerCase()),
            el('td', { className: 'num', 'data-field': 'tools' }, String(s.tools.totalCount)),
            el('td', { className: 'num', 'data-field': 'calls' }, formatValue(s.usage.calls, null)),
            el('td', { className: 'num' }, formatValue(s.usage.errorRate ?? null, 'ratio')),
            el('td', { className: 'num' }, formatValue(s.usage.p95LatencyMs ?? null, 'ms')),
          ),
        ),
      ),
    );
    const next =
      pageInfo.hasNextPage && pageInfo.endCursor != null
        ? el('a', { href: nextHref(pageInfo.endCursor), 'data-link': true }, 'Next servers')
        : '';
    section.replaceChildren(title, el('div', { className: 'scroll' }, table), next);
  });
  return section;
}
