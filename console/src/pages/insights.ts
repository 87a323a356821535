/**
 * Insights: the feed of a workspace (its readable descendants' included), newest window first,
 * 50 a page, each with its kind, a link to its subject, its window and its key numbers; the
 * workspace, the kind and the page live in the URL. One GraphQL query (`Workspace.insights`). Also
 * the insight lists of the skill and agent pages (REST), whose markers analytics.ts draws.
 */
import { graphql, rest, type Answer } from '../api.ts';
import { el, loading, navigate, problemView } from '../dom.ts';
import type {
  InsightKind,
  WorkspaceInsightsQuery,
  WorkspaceInsightsQueryVariables,
  WorkspaceTreeQuery,
} from '../generated/operations.ts';
import FEED from '../queries/workspace-insights.graphql';
import WORKSPACES from '../queries/workspaces.graphql';
import type { View } from './analytics.ts';
import { fromRest, insightTable, type InsightListAnswer, type ShownInsight } from './insight-view.ts';
import { kindLabel } from './insight-text.ts';

/** The kinds, as REST and the URL spell them and as the schema does. */
const KINDS = new Map<string, InsightKind>([
  ['usage_summary', 'USAGE_SUMMARY'],
  ['tool_failure_hotspot', 'TOOL_FAILURE_HOTSPOT'],
  ['latency_regression', 'LATENCY_REGRESSION'],
  ['cost_spike', 'COST_SPIKE'],
  ['token_efficiency', 'TOKEN_EFFICIENCY'],
  ['evaluation_drop', 'EVALUATION_DROP'],
]);
/** Pages of 100 the skill and agent pages read at most: the insights of a range beyond them are not marked. */
const MAX_PAGES = 3;

/** The insights of a REST list whose window meets the view's range (newest first, at most 300). */
export async function insightsOf(path: string, view: View): Promise<Answer<ShownInsight[]>> {
  const found: ShownInsight[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = `?since=${view.start}&limit=100${cursor !== undefined ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const answer = await rest<InsightListAnswer>('GET', `${path}${query}`);
    if (answer.problem !== undefined) return answer;
    found.push(...fromRest(answer.data));
    cursor = answer.data.next_cursor;
    if (cursor === undefined) break;
  }
  return { data: found };
}

type Node = NonNullable<WorkspaceInsightsQuery['workspace']>['insights']['nodes'][number];

function shown(n: Node): ShownInsight {
  const { subject } = n;
  const artifact = subject.skill ?? subject.agent;
  const href =
    subject.skill != null
      ? `/console/skills/${encodeURIComponent(subject.id)}`
      : subject.agent != null
        ? `/console/agents/${encodeURIComponent(subject.id)}/usage`
        : undefined;
  const name =
    artifact != null
      ? (artifact.displayName ?? artifact.name)
      : subject.server != null
        ? `${subject.id} (${subject.server})`
        : subject.id;
  return {
    id: n.id,
    kind: n.kind.toLowerCase(),
    start: n.window.startTimeUnixSeconds,
    end: n.window.endTimeUnixSeconds,
    payload: (n.payload ?? {}) as Record<string, unknown>,
    createdAt: n.createdAt,
    subject: { type: subject.type.toLowerCase(), id: subject.id, name, ...(href !== undefined ? { href } : {}) },
  };
}

/** The workspace the feed starts on: the first readable one whose parent is not readable (a root of the tree). */
function firstRoot(workspaces: WorkspaceTreeQuery['viewer']['workspaces']): string {
  const ids = new Set(workspaces.map((w) => w.id));
  return (workspaces.find((w) => w.parentId == null || !ids.has(w.parentId)) ?? workspaces[0])?.id ?? '';
}

export async function insightsPage(main: HTMLElement, query: URLSearchParams): Promise<void> {
  main.replaceChildren(el('h1', {}, 'Insights'), loading());
  const tree = await graphql<WorkspaceTreeQuery>(WORKSPACES);
  if (tree.problem !== undefined) {
    main.replaceChildren(el('h1', {}, 'Insights'), problemView(tree.problem));
    return;
  }
  const workspaces = tree.data.viewer.workspaces;
  const ws = query.get('workspace') ?? firstRoot(workspaces);
  const kind = query.get('kind') ?? '';
  const asked = KINDS.get(kind);
  const after = query.get('after');
  const variables: WorkspaceInsightsQueryVariables = {
    id: ws,
    ...(asked !== undefined ? { kind: [asked] } : {}),
    ...(after !== null ? { after } : {}),
  };
  const answer = await graphql<WorkspaceInsightsQuery>(FEED, variables);
  const go = (changes: Record<string, string>) => {
    const next = new URLSearchParams(query);
    next.delete('after');
    for (const [k, v] of Object.entries(changes)) {
      if (v === '') next.delete(k);
      else next.set(k, v);
    }
    navigate(`/console/insights?${next.toString()}`);
  };
  const select = (name: string, options: [string, string][], value: string) => {
    const s = el(
      'select',
      { name },
      ...options.map(([v, label]) => el('option', { value: v, selected: v === value }, label)),
    );
    s.addEventListener('change', () => {
      go({ [name]: s.value });
    });
    return el('label', {}, `${name} `, s);
  };
  const controls = el(
    'div',
    { className: 'controls' },
    select(
      'workspace',
      workspaces.map((w) => [w.id, w.displayName]),
      ws,
    ),
    select('kind', [['', 'any'], ...[...KINDS.keys()].map((k): [string, string] => [k, kindLabel(k)])], kind),
  );
  if (answer.problem !== undefined || answer.data.workspace === null) {
    const problem = answer.problem ?? { title: 'Not found', detail: `no workspace ${ws}` };
    main.replaceChildren(el('h1', {}, 'Insights'), controls, problemView(problem));
    return;
  }
  const { workspace } = answer.data;
  const { nodes, pageInfo } = workspace.insights;
  const more = el('button', { type: 'button', name: 'more' }, 'Older insights');
  more.addEventListener('click', () => {
    const next = new URLSearchParams(query);
    next.set('after', pageInfo.endCursor ?? '');
    navigate(`/console/insights?${next.toString()}`);
  });
  main.replaceChildren(
    el('h1', {}, 'Insights'),
    controls,
    el(
      'p',
      { className: 'hint' },
      `${workspace.displayName} and the workspaces under it you can read, newest window first${after !== null ? ' (older page)' : ''}`,
    ),
    insightTable(nodes.map(shown), true, 'No insight yet.'),
    ...(pageInfo.hasNextPage ? [more] : []),
  );
}
