/**
 * The import order of a validated bundle, written once for both registry engines: containers before
 * what they hold (organizations, users, workspaces and their roots, memberships, projects,
 * repositories), then the MCP servers with their `is_latest` refreshed, then the artifacts (tools
 * name their server by `server_id`) with `is_latest` moved to the bundle's latest versions and their
 * ready documents, then relationships, identities and profile images, and last the relationship
 * forms the rows written dropped. Each engine implements only the table writes (`BundleWrites`: SQLite
 * synchronous, sqlite/import-bundle.ts; PostgreSQL asynchronous, postgres/import-bundle.ts) and runs
 * the whole walk in one transaction of its own, so an import is all-or-nothing; every write is an
 * upsert, so a re-import updates in place.
 */
import type {
  ArtifactVersion,
  Bundle,
  McpServerEntry,
  Identity,
  Membership,
  Organization,
  Project,
  Relationship,
  Repo,
  User,
} from '../domain/types.ts';
import type { ImportCounts } from './registry-port.ts';

/**
 * One engine's writes of a bundle, called in the import order within its transaction. `R` is what
 * a write returns: nothing on a synchronous engine, a promise the walk awaits on an asynchronous one.
 */
export interface BundleWrites<R> {
  organization(o: Organization): R;
  user(u: User): R;
  workspace(w: Bundle['workspaces'][number]): R;
  /** After every workspace: each one's `root_workspace_id`, derived from the tree. */
  workspaceRoots(): R;
  membership(m: Membership): R;
  project(p: Project): R;
  repo(r: Repo): R;
  /**
   * The MCP server versions, upserted, then `is_latest` of their names recomputed
   * (mcp-server-rows.ts `latestVersion`). `at` is the import's instant (ISO 8601 UTC): the time of a
   * change, and the `published_at` of a new version that has none. Throws McpServerConflictError
   * `name_taken` when the stored versions give an entry's id another name or its name another id.
   */
  mcpServers(entries: McpServerEntry[], at: string): R;
  /** Before the artifacts: the stored versions of `ids` (those with a latest version in the bundle) stop being latest. */
  unmarkLatest(ids: string[]): R;
  artifact(a: ArtifactVersion): R;
  /** After the artifacts, on an engine that indexes apart from the upsert: the full-text index of `ids`' latest versions. */
  indexLatest?(ids: string[]): R;
  /** The ready documents a re-imported row whose ready form did not change lost to the trigger. */
  readyDocuments(): R;
  relationship(r: Relationship): R;
  identity(i: Identity): R;
  profileImage(img: Bundle['profile_images'][number]): R;
  /** Last: the relationship forms the triggers dropped for the rows this import changed. */
  relationshipForms(): R;
}

/** Every write of `b`, in the import order, each called only when the previous one is taken. */
function* importOrder<R>(b: Bundle, w: BundleWrites<R>): Generator<R, void, undefined> {
  for (const o of b.organizations) yield w.organization(o);
  for (const u of b.users) yield w.user(u);
  for (const ws of b.workspaces) yield w.workspace(ws);
  yield w.workspaceRoots();
  for (const m of b.memberships) yield w.membership(m);
  for (const p of b.projects) yield w.project(p);
  for (const r of b.repos) yield w.repo(r);
  yield w.mcpServers(b.mcp_servers, new Date().toISOString());
  const latestIds = [...new Set(b.artifacts.filter((a) => a.is_latest).map((a) => a.id))];
  yield w.unmarkLatest(latestIds);
  for (const a of b.artifacts) yield w.artifact(a);
  if (w.indexLatest !== undefined) yield w.indexLatest(latestIds);
  yield w.readyDocuments();
  for (const r of b.relationships) yield w.relationship(r);
  for (const i of b.identities) yield w.identity(i);
  for (const img of b.profile_images) yield w.profileImage(img);
  yield w.relationshipForms();
}

/** What the bundle held, as an import reports it. */
const importCounts = (b: Bundle): ImportCounts => ({
  organizations: b.organizations.length,
  users: b.users.length,
  workspaces: b.workspaces.length,
  memberships: b.memberships.length,
  projects: b.projects.length,
  repos: b.repos.length,
  artifacts: b.artifacts.length,
  relationships: b.relationships.length,
  mcp_servers: b.mcp_servers.length,
});

/** Writes `b` with synchronous writes (inside the caller's transaction); throws at the first failing write. */
export function writeBundleSync(b: Bundle, w: BundleWrites<void>): ImportCounts {
  const steps = importOrder(b, w);
  while (!steps.next().done) {
    // Taking a step made its write.
  }
  return importCounts(b);
}

/** Writes `b` with asynchronous writes, one after the other (inside the caller's transaction); rejects at the first failing write. */
export async function writeBundle(b: Bundle, w: BundleWrites<Promise<unknown>>): Promise<ImportCounts> {
  for (const write of importOrder(b, w)) await write;
  return importCounts(b);
}
