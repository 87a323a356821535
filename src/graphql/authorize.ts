/**
 * By-id lookups with the authorization of DESIGN §6, through the request's loaders: an object the
 * caller cannot discover is `not_found`, one it can discover but not read is `access_denied`,
 * exactly as over REST. Resolvers (root fields, edges and `__resolveReference`) use these, so
 * GraphQL and federation `_entities` obey the same rules.
 */
import type { Access } from '../auth/access.ts';
import type { RequestContext } from '../context.ts';
import type {
  ArtifactKind,
  ArtifactVersion,
  McpServerVersion,
  Project,
  Repo,
  User,
  Workspace,
} from '../domain/types.ts';
import { ApiError } from '../errors.ts';
import { assertDirectoryReader } from '../org/list-users.ts';

const accessByRequest = new WeakMap<RequestContext, Access>();

/**
 * Calls `use` with the caller's Access: synchronously once it is loaded (almost every field of a
 * query), else after loading it. Sync results spare graphql-js a promise per field.
 */
export function withAccess<T>(ctx: RequestContext, use: (access: Access) => T): T | Promise<T> {
  const access = accessByRequest.get(ctx);
  if (access !== undefined) return use(access);
  return loadedAccess(ctx).then(use);
}

/** The caller's Access, recorded for `withAccess` once loaded (so later fields of the request get it synchronously). */
export async function loadedAccess(ctx: RequestContext): Promise<Access> {
  const loaded = await ctx.access();
  accessByRequest.set(ctx, loaded);
  return loaded;
}

/** The latest version of an artifact (of one kind, when given) that the caller can read. */
export async function readableArtifact(ctx: RequestContext, id: string, kind?: ArtifactKind): Promise<ArtifactVersion> {
  const [row, access] = await Promise.all([ctx.loaders.artifact.load(id), loadedAccess(ctx)]);
  const what = kind ?? 'artifact';
  if (row === null || (kind !== undefined && row.kind !== kind))
    throw new ApiError('not_found', `${what} ${id} not found`);
  access.assertReadable(row.workspace_id, what, id);
  return row;
}

/** A workspace the caller can read (the org tree is loaded once per request with the access). */
export function readableWorkspace(ctx: RequestContext, id: string): Workspace | Promise<Workspace> {
  return withAccess(ctx, (access) => {
    access.assertReadable(id);
    return access.workspace(id) as Workspace;
  });
}

/**
 * A workspace for an edge (parent, root): null when the caller cannot read it. Edges behave like
 * lists of one, which only ever hold readable items; by-id lookups report why instead.
 */
export function readableWorkspaceOrNull(ctx: RequestContext, id: string): Workspace | null | Promise<Workspace | null> {
  return withAccess(ctx, (access) => (access.canRead(id) ? (access.workspace(id) as Workspace) : null));
}

/** A source repository whose workspace the caller can read (repositories are authorized like workspaces). */
export async function readableRepo(ctx: RequestContext, id: string): Promise<Repo> {
  const [repo, access] = await Promise.all([ctx.loaders.repo.load(id), loadedAccess(ctx)]);
  if (repo === null) throw new ApiError('not_found', `repository ${id} not found`);
  access.assertReadable(repo.workspace_id, 'repository', id);
  return repo;
}

/** The latest version of an MCP server of the caller's organization whose workspace the caller can read. */
export async function readableMcpServer(ctx: RequestContext, id: string): Promise<McpServerVersion> {
  const [server, access] = await Promise.all([ctx.loaders.mcpServer.load(id), loadedAccess(ctx)]);
  if (server === null) throw new ApiError('not_found', `MCP server ${id} not found`);
  access.assertReadable(server.workspace_id, 'MCP server', id);
  return server;
}

/** An MCP server for an edge (a tool's `server`): null when there is none or the caller cannot read it. */
export async function readableMcpServerOrNull(ctx: RequestContext, id: string): Promise<McpServerVersion | null> {
  const [server, access] = await Promise.all([ctx.loaders.mcpServer.load(id), loadedAccess(ctx)]);
  return server !== null && access.canRead(server.workspace_id) ? server : null;
}

/** A project whose workspace the caller can read. */
export async function readableProject(ctx: RequestContext, id: string): Promise<Project> {
  const [project, access] = await Promise.all([ctx.loaders.project.load(id), loadedAccess(ctx)]);
  if (project === null) throw new ApiError('not_found', `project ${id} not found`);
  access.assertReadable(project.workspace_id, 'project', id);
  return project;
}

/** A directory user of the caller's organization (readable org-wide by users; never by service accounts). */
export async function orgUser(ctx: RequestContext, id: string): Promise<User> {
  assertDirectoryReader(ctx);
  const user = await ctx.loaders.user.load(id);
  if (user === null || user.org_id !== ctx.caller.orgId) throw new ApiError('not_found', `user ${id} not found`);
  return user;
}

/**
 * A user of the caller's organization, or null when there is none (edges to absent objects) or the
 * caller may not read the directory (a service account sees no people behind creators and members).
 */
export function orgUserOrNull(ctx: RequestContext, id: string): User | null | Promise<User | null> {
  if (ctx.caller.kind === 'service_account') return null;
  const ofOrg = (user: User | null) => (user !== null && user.org_id === ctx.caller.orgId ? user : null);
  const loaded = ctx.loaders.user.peek(id);
  return loaded === undefined ? ctx.loaders.user.load(id).then(ofOrg) : ofOrg(loaded);
}

/** Loads, in one batch, the users `orgUserOrNull` would answer for `ids` (none for a service account). */
export async function loadOrgUsers(ctx: RequestContext, ids: readonly string[]): Promise<void> {
  if (ctx.caller.kind !== 'service_account') await ctx.loaders.user.loadMany(ids);
}
