/**
 * Operation 5: a workspace, its descendants, their projects and the latest version of every
 * artifact in them, each with the caller's permissions. Counts are per container (an artifact
 * counts in the workspace and project that hold it directly, not in their ancestors). An artifact's
 * `repo` is shown when the caller can read the repository's workspace (repositories are authorized
 * like workspaces), wherever in the organization that workspace is.
 */
import type { KindCounts } from '../store/registry-port.ts';
import type { Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import type { Project, Workspace } from '../domain/types.ts';
import { loadArtifactExtras, presentArtifact } from '../artifacts/present.ts';

export interface WorkspaceExport {
  artifacts: Record<string, unknown>[];
  projects: Record<string, unknown>[];
  workspaces: Record<string, unknown>[];
}

type Named = { id: string; name: string; display_name: string };
const named = (x: Named) => ({ display_name: x.display_name, id: x.id, name: x.name });
const total = (c: Record<string, number> | undefined) => Object.values(c ?? {}).reduce((a, b) => a + b, 0);

function presentWorkspace(
  ws: Workspace,
  access: Access,
  counts: Record<string, number> | undefined,
  members: number,
): Record<string, unknown> {
  const { org_id: _org, ...fields } = ws;
  const out: Record<string, unknown> = { ...fields };
  out.artifact_count = total(counts);
  out.artifact_count_by_kind = counts ?? {};
  const role = access.roleOf(ws.id);
  if (role !== null) out.effective_role = role;
  out.member_count = members;
  const parent = ws.parent_id === undefined ? undefined : access.workspace(ws.parent_id);
  if (parent !== undefined) out.parent = named(parent);
  const root = access.workspace(ws.root_workspace_id);
  if (root !== undefined) out.root_workspace = named(root);
  out.permissions = access.workspacePermissions(ws.id);
  return out;
}

function presentProject(
  p: Project,
  access: Access,
  counts: Record<string, number> | undefined,
): Record<string, unknown> {
  const ws = access.workspace(p.workspace_id);
  const out: Record<string, unknown> = { ...p, root_workspace_id: ws?.root_workspace_id ?? p.workspace_id };
  out.artifact_count = total(counts);
  out.artifact_count_by_kind = counts ?? {};
  out.permissions = access.projectPermissions(p);
  const root = ws === undefined ? undefined : access.workspace(ws.root_workspace_id);
  if (root !== undefined) out.root_workspace = named(root);
  if (ws !== undefined) out.workspace = named(ws);
  return out;
}

export async function exportWorkspace(ctx: RequestContext, workspaceId: string): Promise<WorkspaceExport> {
  const access = await ctx.access();
  access.assertReadable(workspaceId);
  // Roles apply to whole subtrees, so every descendant of a readable workspace is readable.
  const ids = access.subtree(workspaceId);
  const store = ctx.registry;
  const [projects, artifacts, wsCounts, members] = await Promise.all([
    store.listProjects(ids),
    store.listArtifacts(ids),
    store.countArtifacts('workspace', ids),
    store.countMembers(ids),
  ]);
  ctx.checkDeadline();
  const repoIds = [...new Set(artifacts.flatMap((a) => (a.repo_id === undefined ? [] : [a.repo_id])))];
  const [projectCounts, extras, repos] = await Promise.all([
    projects.length > 0
      ? store.countArtifacts(
          'project',
          projects.map((p) => p.id),
          access.readableWorkspaceIds,
        )
      : Promise.resolve<KindCounts>(new Map()),
    loadArtifactExtras(store, access, artifacts),
    repoIds.length > 0 ? store.getRepos(repoIds) : Promise.resolve([]),
  ]);
  ctx.checkDeadline();
  const projectsById = new Map(projects.map((p) => [p.id, p]));
  const reposById = new Map(repos.filter((r) => access.canRead(r.workspace_id)).map((r) => [r.id, r]));
  const exported = {
    artifacts: artifacts.map((a) => {
      const out = presentArtifact(a, access, extras);
      out.display_name ??= a.name;
      const ws = access.workspace(a.workspace_id);
      if (ws !== undefined) out.workspace = named(ws);
      const project = a.project_id === undefined ? undefined : projectsById.get(a.project_id);
      if (project !== undefined) out.project = { ...named(project), workspace_id: project.workspace_id };
      const repo = a.repo_id === undefined ? undefined : reposById.get(a.repo_id);
      if (repo !== undefined)
        out.repo = { ...named(repo), source_uri: repo.source_uri, workspace_id: repo.workspace_id };
      return out;
    }),
    projects: projects.map((p) => presentProject(p, access, projectCounts.get(p.id))),
    workspaces: ids
      .map((id) => access.workspace(id) as Workspace)
      .map((ws) => presentWorkspace(ws, access, wsCounts.get(ws.id), members.get(ws.id) ?? 0)),
  };
  ctx.checkDeadline();
  return exported;
}
