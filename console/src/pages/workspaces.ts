/**
 * Workspaces: the tree of workspaces the user can read (a workspace whose parent is unreadable
 * starts a tree of its own), each with a JSON download of its export (REST operation 5).
 */
import { graphql, rest } from '../api.ts';
import { el, empty, loading, problemView } from '../dom.ts';
import type { WorkspaceTreeQuery } from '../generated/operations.ts';
import QUERY from '../queries/workspaces.graphql';

type Workspace = WorkspaceTreeQuery['viewer']['workspaces'][number];

function exportButton(ws: Workspace, status: HTMLElement): HTMLElement {
  const button = el('button', { type: 'button', className: 'link', 'data-export': ws.id }, 'export JSON');
  button.addEventListener('click', () => {
    void (async () => {
      status.replaceChildren(loading());
      const answer = await rest<unknown>('GET', `/registry/v1/workspaces/${encodeURIComponent(ws.id)}/export`);
      if (answer.problem !== undefined) {
        status.replaceChildren(problemView(answer.problem));
        return;
      }
      const link = el('a', {
        href: URL.createObjectURL(new Blob([JSON.stringify(answer.data, null, 2)], { type: 'application/json' })),
        download: `${ws.id}-export.json`,
      });
      link.click();
      status.replaceChildren(el('p', { className: 'hint' }, `exported ${ws.id}`));
    })();
  });
  return button;
}

export async function workspacesPage(main: HTMLElement): Promise<void> {
  main.replaceChildren(el('h1', {}, 'Workspaces'), loading());
  const answer = await graphql<WorkspaceTreeQuery>(QUERY);
  if (answer.problem !== undefined) {
    main.replaceChildren(el('h1', {}, 'Workspaces'), problemView(answer.problem));
    return;
  }
  const all = answer.data.viewer.workspaces;
  const ids = new Set(all.map((w) => w.id));
  const children = new Map<string, Workspace[]>();
  for (const w of all) {
    const parent = w.parentId != null && ids.has(w.parentId) ? w.parentId : '';
    children.set(parent, [...(children.get(parent) ?? []), w]);
  }
  const status = el('div', { className: 'status' });
  const tree = (parent: string): HTMLElement =>
    el(
      'ul',
      { className: 'tree' },
      ...(children.get(parent) ?? []).map((w) =>
        el(
          'li',
          { 'data-workspace': w.id },
          el('strong', {}, w.displayName),
          ` ${w.id} · ${w.kind.toLowerCase()} · ${w.artifactCount} artifact(s) · ${w.effectiveRole?.toLowerCase() ?? 'no role'} `,
          exportButton(w, status),
          ...(children.has(w.id) ? [tree(w.id)] : []),
        ),
      ),
    );
  main.replaceChildren(
    el('h1', {}, 'Workspaces'),
    status,
    all.length === 0 ? empty('No workspace is readable.') : tree(''),
  );
}
