/**
 * The console at /console (a single page with deep-linkable URLs): sign-in (the start-up link's
 * fragment, or a pasted token or API key), then the pages of the navigation. It talks only to the
 * public API with the user's token, so what it shows is exactly what the API lets the user read.
 */
import { graphql } from './api.ts';
import { el, loading, problemView, type Problem } from './dom.ts';
import type { ViewerQuery } from './generated/operations.ts';
import { agentUsagePage } from './pages/agent-usage.ts';
import { agentPage, catalogPage } from './pages/catalog.ts';
import { insightsPage } from './pages/insights.ts';
import { skillPage } from './pages/skill.ts';
import { skillsPage } from './pages/skills.ts';
import { toolsPage } from './pages/tools.ts';
import { workspacesPage } from './pages/workspaces.ts';
import VIEWER from './queries/viewer.graphql';
import { adoptFragmentToken, currentToken, signIn, signOut } from './session.ts';
import './console.css';

/** Pages by path under /console; each renders into `main` from its path parameters and query. */
const ROUTES: {
  pattern: RegExp;
  render: (main: HTMLElement, params: string[], query: URLSearchParams) => Promise<void>;
}[] = [
  {
    pattern: /^\/console\/skills\/([^/]+)$/,
    render: (main, [id], query) => skillPage(main, decodeURIComponent(id ?? ''), query),
  },
  { pattern: /^\/console(?:\/skills)?\/?$/, render: (main) => skillsPage(main) },
  { pattern: /^\/console\/catalog$/, render: (main, _params, query) => catalogPage(main, query) },
  { pattern: /^\/console\/agents\/([^/]+)$/, render: (main, [id]) => agentPage(main, decodeURIComponent(id ?? '')) },
  {
    pattern: /^\/console\/agents\/([^/]+)\/usage$/,
    render: (main, [id], query) => agentUsagePage(main, decodeURIComponent(id ?? ''), query),
  },
  { pattern: /^\/console\/tools$/, render: (main, _params, query) => toolsPage(main, query) },
  { pattern: /^\/console\/workspaces$/, render: (main) => workspacesPage(main) },
  { pattern: /^\/console\/insights$/, render: (main, _params, query) => insightsPage(main, query) },
];

function signInForm(main: HTMLElement, problem?: Problem): void {
  const input = el('input', {
    type: 'password',
    name: 'token',
    placeholder: 'token or API key',
    autocomplete: 'off',
    required: true,
  });
  const form = el(
    'form',
    { className: 'sign-in' },
    el('h1', {}, 'Sign in'),
    el('p', {}, 'Paste a bearer token or an API key. It is kept in this tab only.'),
    input,
    el('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    signIn(input.value);
    void render();
  });
  main.replaceChildren(...(problem !== undefined ? [problemView(problem)] : []), form);
}

function header(viewer: ViewerQuery['viewer']): HTMLElement {
  const who = viewer.user?.name ?? viewer.user?.id ?? viewer.agent?.name ?? viewer.agent?.id ?? 'unknown';
  const out = el('button', { type: 'button', className: 'link' }, 'Sign out');
  out.addEventListener('click', () => {
    signOut();
    void render();
  });
  return el(
    'header',
    {},
    el('a', { href: '/console', className: 'brand', 'data-link': true }, 'Gateway console'),
    el(
      'nav',
      {},
      el('a', { href: '/console/skills', 'data-link': true }, 'Skills'),
      el('a', { href: '/console/catalog', 'data-link': true }, 'Agents'),
      el('a', { href: '/console/tools', 'data-link': true }, 'Tools'),
      el('a', { href: '/console/insights', 'data-link': true }, 'Insights'),
      el('a', { href: '/console/workspaces', 'data-link': true }, 'Workspaces'),
      el('a', { href: '/graphql' }, 'GraphQL explorer'),
    ),
    el(
      'span',
      { className: 'viewer' },
      `Signed in as ${who} (${viewer.kind.toLowerCase().replace('_', ' ')}) in ${viewer.orgId}`,
    ),
    out,
  );
}

let viewer: ViewerQuery['viewer'] | null = null;

async function render(): Promise<void> {
  const body = document.body;
  const main = el('main', {});
  if (currentToken() === null) {
    body.replaceChildren(main);
    signInForm(main);
    return;
  }
  if (viewer === null) {
    body.replaceChildren(main);
    main.append(loading());
    const answer = await graphql<ViewerQuery>(VIEWER);
    if (answer.problem !== undefined) {
      signOut();
      signInForm(main, answer.problem);
      return;
    }
    viewer = answer.data.viewer;
  }
  body.replaceChildren(header(viewer), main);
  const route = ROUTES.find((r) => r.pattern.test(location.pathname));
  if (route === undefined) {
    main.replaceChildren(problemView({ title: 'Not found', detail: `no console page at ${location.pathname}` }));
    return;
  }
  await route.render(
    main,
    (route.pattern.exec(location.pathname) ?? []).slice(1),
    new URLSearchParams(location.search),
  );
}

/** Links marked data-link change the page without reloading it. */
document.addEventListener('click', (event) => {
  const link = (event.target as Element | null)?.closest('a[data-link]');
  if (!(link instanceof HTMLAnchorElement) || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  history.pushState(null, '', link.href);
  void render();
});
window.addEventListener('popstate', () => void render());
// A token link opened in a tab already on the console changes only the fragment.
window.addEventListener('hashchange', () => {
  if (!location.hash.includes('token=')) return;
  adoptFragmentToken();
  viewer = null;
  void render();
});
window.addEventListener('console:navigate', () => void render());

adoptFragmentToken();
void render();
