/**
 * The console's shell at /console: sign-in (a token from the start-up link's fragment, or any token
 * or API key pasted into the form), who the caller is, and the way to the explorer. It talks only
 * to the public API with the user's token; API errors show their problem title, detail and trace id.
 */
import { adoptFragmentToken, authHeaders, currentToken, signIn, signOut } from './session.ts';
import './console.css';

interface Problem {
  title?: string;
  detail?: string;
  trace_id?: string;
}

const VIEWER = 'query Viewer { viewer { kind orgId user { id name } agent { id name } workspaces { id } } }';

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, string | boolean> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  Object.assign(node, props);
  node.append(...children);
  return node;
}

function problemView(p: Problem): HTMLElement {
  return el(
    'div',
    { className: 'problem', role: 'alert' },
    el('strong', {}, p.title ?? 'Request failed'),
    ...(p.detail !== undefined ? [el('p', {}, p.detail)] : []),
    ...(p.trace_id !== undefined ? [el('p', { className: 'trace' }, `trace id ${p.trace_id}`)] : []),
  );
}

interface ViewerData {
  viewer: {
    kind: string;
    orgId: string;
    user: { id: string; name: string | null } | null;
    agent: { id: string; name: string } | null;
    workspaces: { id: string }[];
  };
}

async function viewer(): Promise<{ data?: ViewerData; problem?: Problem }> {
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeaders() },
    body: JSON.stringify({ query: VIEWER }),
  });
  const body = (await res.json()) as {
    data?: ViewerData;
    errors?: { message: string; extensions?: { code?: string; traceId?: string } }[];
  };
  const error = body.errors?.[0];
  if (error !== undefined) {
    return {
      problem: {
        title: error.extensions?.code ?? 'error',
        detail: error.message,
        ...(error.extensions?.traceId !== undefined ? { trace_id: error.extensions.traceId } : {}),
      },
    };
  }
  return body.data === undefined ? { problem: { title: `HTTP ${res.status}` } } : { data: body.data };
}

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
    void render(main);
  });
  main.replaceChildren(...(problem !== undefined ? [problemView(problem)] : []), form);
}

async function render(main: HTMLElement): Promise<void> {
  if (currentToken() === null) {
    signInForm(main);
    return;
  }
  main.replaceChildren(el('p', { className: 'loading' }, 'Loading…'));
  const { data, problem } = await viewer();
  if (data === undefined) {
    signOut();
    signInForm(main, problem ?? { title: 'sign-in failed' });
    return;
  }
  const v = data.viewer;
  const who = v.user?.name ?? v.user?.id ?? v.agent?.name ?? v.agent?.id ?? 'unknown';
  const out = el('button', { type: 'button' }, 'Sign out');
  out.addEventListener('click', () => {
    signOut();
    void render(main);
  });
  main.replaceChildren(
    el('h1', {}, 'Gateway console'),
    el(
      'p',
      { className: 'viewer' },
      `Signed in as ${who} (${v.kind.toLowerCase()}) in ${v.orgId}, reading ${v.workspaces.length} workspace(s).`,
    ),
    el('nav', {}, el('a', { href: '/graphql' }, 'GraphQL explorer'), out),
  );
}

adoptFragmentToken();
const main = document.querySelector('main');
if (main !== null) void render(main);
