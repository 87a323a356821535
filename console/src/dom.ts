/** Small DOM helpers of the console: elements, problems as the API states them, loading and empty states. */

export interface Problem {
  title?: string;
  detail?: string;
  trace_id?: string;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, string | boolean> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k.startsWith('data-') || k === 'role' || k.startsWith('aria-')) node.setAttribute(k, String(v));
    else Object.assign(node, { [k]: v });
  }
  node.append(...children);
  return node;
}

export function problemView(p: Problem): HTMLElement {
  return el(
    'div',
    { className: 'problem', role: 'alert' },
    el('strong', {}, p.title ?? 'Request failed'),
    ...(p.detail !== undefined ? [el('p', {}, p.detail)] : []),
    ...(p.trace_id !== undefined ? [el('p', { className: 'trace' }, `trace id ${p.trace_id}`)] : []),
  );
}

export const loading = () => el('p', { className: 'loading' }, 'Loading…');
export const empty = (text: string) => el('p', { className: 'empty' }, text);

/** Moves the console to `path` (same page, new URL): the shell renders the page it names. */
export function navigate(path: string): void {
  history.pushState(null, '', path);
  window.dispatchEvent(new Event('console:navigate'));
}
