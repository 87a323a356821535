/** The demo repositories, and the repository each git-sourced demo artifact names. */
import { at } from './demo-values.ts';

type Obj = Record<string, unknown>;

/**
 * The demo repositories (added last and without the PRNG, so every value generated before stays as
 * it was): one per team workspace and one shared per org root, each owned by its workspace's
 * creator. Every artifact with `source_type: git` names the repository of its team (the shared one
 * at the root), so a team's viewer reads its repository while the shared one stays the root's.
 */
export function syncFromRepos(workspaces: Obj[], artifacts: Obj[]): Obj[] {
  const parentOf = new Map(workspaces.map((w) => [w.id as string, w.parent_id as string | undefined]));
  const holders = workspaces.filter(
    (w) => w.parent_id === undefined || (w.kind === 'team' && parentOf.get(w.parent_id as string) === undefined),
  );
  const repoOf = new Map<string, string>();
  const repos = holders.map((w, i) => {
    const ws = w.id as string;
    const isRoot = w.parent_id === undefined;
    const name = `${ws.replace(/^ws-/, '')}${isRoot ? '-shared' : ''}`;
    repoOf.set(ws, `repo-${name}`);
    return {
      id: `repo-${name}`,
      workspace_id: ws,
      name,
      display_name: `${w.display_name as string} ${isRoot ? 'shared sources' : 'sources'}`,
      source_uri: `https://git.example.com/${name}.git`,
      default_branch: 'main',
      created_at: at(9_000 + i),
      created_by: w.created_by,
      updated_at: at(9_100 + i),
      updated_by: w.updated_by,
    };
  });
  // The repository of the nearest holder on the path to the root.
  const repoFor = (ws: string | undefined): string | undefined =>
    ws === undefined ? undefined : (repoOf.get(ws) ?? repoFor(parentOf.get(ws)));
  for (const a of artifacts) {
    const repo = a.source_type === 'git' ? repoFor(a.workspace_id as string) : undefined;
    if (repo !== undefined) a.repo_id = repo;
  }
  return repos;
}
