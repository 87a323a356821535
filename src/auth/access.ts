/**
 * Authorization (DESIGN §6): the one module every operation asks what a caller may see and do.
 *
 * - A membership role on a workspace applies to its whole subtree; the strongest role on the
 *   path from the root wins.
 * - A service account acts as `editor` on its agent's workspace subtree (it may read it and
 *   ingest its own telemetry) and nothing else.
 * - Workspaces of the caller's org are discoverable; anything of another org is invisible.
 * - By id: not discoverable -> 404 not_found; discoverable but not readable -> 403 access_denied.
 */
import { ApiError } from '../errors.ts';
import type { ArtifactVersion, Project, Role, Workspace } from '../domain/types.ts';
import type { RegistryStore } from '../store/registry-port.ts';
import { callerKey, type Caller } from './caller.ts';
import { orgTree, userMemberships } from './registry-memo.ts';

const RANK: Record<Role, number> = { viewer: 1, editor: 2, admin: 3 };

export interface WorkspacePermissions {
  can_create_content: boolean;
  can_delete: boolean;
  can_discover: boolean;
  can_join: boolean;
  can_leave: boolean;
  can_manage_members: boolean;
  can_read: boolean;
  can_update: boolean;
}

export interface ArtifactPermissions {
  can_add_relationship: boolean;
  can_create_version: boolean;
  can_delete: boolean;
  can_edit: boolean;
  can_link: boolean;
  can_read: boolean;
  can_remove_relationship: boolean;
  can_unlink: boolean;
}

export class Access {
  readonly caller: Caller;
  private readonly workspaces: Map<string, Workspace>;
  private readonly effective = new Map<string, Role>();
  private readonly direct: Map<string, Role>;
  private readonly children = new Map<string, string[]>();
  readonly readableWorkspaceIds: readonly string[];

  constructor(caller: Caller, orgWorkspaces: readonly Workspace[], directRoles: Map<string, Role>) {
    this.caller = caller;
    this.direct = directRoles;
    this.workspaces = new Map(orgWorkspaces.map((w) => [w.id, w]));
    for (const w of orgWorkspaces) {
      if (w.parent_id === undefined) continue;
      const list = this.children.get(w.parent_id) ?? [];
      list.push(w.id);
      this.children.set(w.parent_id, list);
    }
    for (const [wsId, role] of directRoles) {
      for (const id of this.subtree(wsId)) {
        const had = this.effective.get(id);
        if (had === undefined || RANK[role] > RANK[had]) this.effective.set(id, role);
      }
    }
    this.readableWorkspaceIds = Object.freeze([...this.effective.keys()].sort());
  }

  /** Whether the caller holds a membership on this very workspace (not one inherited from an ancestor). */
  isDirectMember(workspaceId: string): boolean {
    return this.direct.has(workspaceId);
  }

  /** The workspace and all its descendants (ids of the caller's org only). */
  subtree(workspaceId: string): string[] {
    if (!this.workspaces.has(workspaceId)) return [];
    const out: string[] = [];
    const stack = [workspaceId];
    while (stack.length > 0) {
      const id = stack.pop() as string;
      out.push(id);
      for (const c of this.children.get(id) ?? []) stack.push(c);
    }
    return out;
  }

  workspace(id: string): Workspace | undefined {
    return this.workspaces.get(id);
  }

  roleOf(workspaceId: string): Role | null {
    return this.effective.get(workspaceId) ?? null;
  }

  /** Every workspace of the caller's organization (those it may learn exist), sorted. */
  discoverableWorkspaceIds(): string[] {
    return [...this.workspaces.keys()].sort();
  }

  canDiscover(workspaceId: string): boolean {
    return this.workspaces.has(workspaceId);
  }

  canRead(workspaceId: string): boolean {
    return this.effective.has(workspaceId);
  }

  /** Throws 404 when the workspace is not discoverable, 403 when it is but cannot be read. */
  assertReadable(workspaceId: string, what = 'workspace', id = workspaceId): void {
    if (!this.canDiscover(workspaceId)) throw new ApiError('not_found', `${what} ${id} not found`);
    if (!this.canRead(workspaceId)) throw new ApiError('access_denied', `no read access to ${what} ${id}`);
  }

  /** The readable scope narrowed to one workspace subtree when asked (404/403 as above). */
  scope(workspaceId: string | undefined): readonly string[] {
    if (workspaceId === undefined) return this.readableWorkspaceIds;
    this.assertReadable(workspaceId);
    return this.subtree(workspaceId).filter((id) => this.canRead(id));
  }

  /** Ingestion and other writes into a workspace need this. */
  canCreateContent(workspaceId: string): boolean {
    const role = this.roleOf(workspaceId);
    return role === 'admin' || role === 'editor';
  }

  workspacePermissions(workspaceId: string): WorkspacePermissions {
    const role = this.roleOf(workspaceId);
    const discover = this.canDiscover(workspaceId);
    const isUser = this.caller.kind === 'user';
    const ws = this.workspaces.get(workspaceId);
    const directMember = this.direct.has(workspaceId);
    return {
      can_create_content: role === 'admin' || role === 'editor',
      can_delete: role === 'admin',
      can_discover: discover,
      can_join: isUser && discover && role === null && ws?.kind !== 'user_default',
      can_leave: isUser && directMember && ws?.kind !== 'user_default',
      can_manage_members: role === 'admin',
      can_read: role !== null,
      can_update: role === 'admin',
    };
  }

  projectPermissions(project: Pick<Project, 'workspace_id'>): WorkspacePermissions {
    return this.workspacePermissions(project.workspace_id);
  }

  artifactPermissions(artifact: Pick<ArtifactVersion, 'workspace_id' | 'created_by'>): ArtifactPermissions {
    const role = this.roleOf(artifact.workspace_id);
    const write = role === 'admin' || role === 'editor';
    const own = this.caller.kind === 'user' && artifact.created_by === this.caller.userId;
    return {
      can_add_relationship: write,
      can_create_version: write,
      can_delete: role === 'admin' || (write && own),
      can_edit: write,
      can_link: write,
      can_read: role !== null,
      can_remove_relationship: write,
      can_unlink: write,
    };
  }
}

/**
 * The Access last built for each caller of a store, with the generation it was built at: the
 * same caller at the same generation gets the same kept org tree and memberships
 * (registry-memo.ts), hence the same Access, which never changes once built. A write moves the
 * generation and so drops them all. At most 10,000 callers per store.
 */
const keptAccess = new WeakMap<RegistryStore, Map<string, { generation: string; access: Access }>>();
const MAX_CALLERS = 10_000;

/** Whether two callers are the same identity in every field an Access reads. */
function sameCaller(a: Caller, b: Caller): boolean {
  if (a.kind === 'user') return b.kind === 'user' && a.orgId === b.orgId && a.userId === b.userId;
  return (
    b.kind === 'service_account' && a.orgId === b.orgId && a.agentId === b.agentId && a.workspaceId === b.workspaceId
  );
}

/**
 * The caller's Access: the one kept for it at the request's generation (`generation` is the
 * request's reading of it), else built from the org tree and the memberships (both kept by
 * generation, registry-memo.ts).
 */
export async function loadAccess(
  store: RegistryStore,
  caller: Caller,
  generation: () => Promise<string> = () => store.generation(),
): Promise<Access> {
  const current = await generation();
  let byCaller = keptAccess.get(store);
  if (byCaller === undefined) {
    byCaller = new Map();
    keptAccess.set(store, byCaller);
  }
  const key = callerKey(caller);
  const kept = byCaller.get(key);
  if (kept !== undefined && kept.generation === current && sameCaller(kept.access.caller, caller)) return kept.access;
  const access = await buildAccess(store, caller, () => Promise.resolve(current));
  if (byCaller.size >= MAX_CALLERS) byCaller.clear();
  byCaller.set(key, { generation: current, access });
  return access;
}

async function buildAccess(store: RegistryStore, caller: Caller, generation: () => Promise<string>): Promise<Access> {
  if (caller.kind === 'user') {
    const [workspaces, memberships] = await Promise.all([
      orgTree(store, caller.orgId, generation),
      userMemberships(store, caller.userId, generation),
    ]);
    const roles = new Map<string, Role>();
    for (const m of memberships) {
      const had = roles.get(m.workspace_id);
      if (had === undefined || RANK[m.role] > RANK[had]) roles.set(m.workspace_id, m.role);
    }
    return new Access(caller, workspaces, roles);
  }
  const workspaces = await orgTree(store, caller.orgId, generation);
  return new Access(caller, workspaces, new Map([[caller.workspaceId, 'editor']]));
}
