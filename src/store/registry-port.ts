/**
 * The registry store port: everything the handlers need from the registry, and nothing of HTTP.
 * Engines (store/sqlite, store/postgres) implement it; one contract suite
 * (test/contract/registry-contract.ts) runs unchanged against each of them. Its MCP server part
 * is mcp-server-port.ts (each engine's mcp-servers.ts); its insight part, `insights`, is
 * insight-port.ts (each engine's insights.ts).
 *
 * Invariants every engine keeps:
 * - reads of artifacts return the latest version unless a method says otherwise;
 * - every list is ordered deterministically (ties broken by `id`);
 * - batch methods (`get*`) take any number of ids, ignore unknown ones and make one round trip;
 * - `importBundle` is all-or-nothing and idempotent (re-import updates in place).
 */
import type { ReadyExtras } from '../shared/relationship-forms.ts';
import type { StoredBytes } from './stored-bytes.ts';
import type { InsightStore } from './insight-port.ts';
import type { DetectionState } from './detection-state-port.ts';
import type { McpServerStore } from './mcp-server-port.ts';
import type {
  ArtifactKind,
  ArtifactVersion,
  Bundle,
  Identity,
  Membership,
  Organization,
  ProfileImage,
  Project,
  Repo,
  Relationship,
  User,
  Workspace,
} from '../domain/types.ts';

/**
 * The store cannot answer (closed, unreachable, busy past its timeout, out of disk). Transports
 * map it to 503 `service_unavailable`; anything else a store throws is a defect (500).
 */
export class StoreUnavailableError extends Error {
  constructor(message = 'the registry store is unavailable', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

export type SearchStrategy = 'keyword' | 'prefix' | 'exact';
export type ArtifactSortField = 'relevance' | 'name' | 'display_name' | 'created_at' | 'updated_at';

export interface ArtifactSort {
  field: ArtifactSortField;
  desc: boolean;
}

export interface ArtifactQuery {
  kind?: ArtifactKind;
  /** The readable scope: only artifacts in these workspaces. Empty -> no results. */
  workspaceIds: readonly string[];
  /**
   * keyword: full-text over name, display_name and instructions, ranked (relevance);
   * prefix: name or display_name starts with the query (case-insensitive);
   * exact: name or display_name equals the query (case-insensitive).
   */
  text?: { query: string; strategy: SearchStrategy };
  /** Applied in order, then `id` ascending. `relevance` is only meaningful with `text`. */
  sorts: ArtifactSort[];
  limit: number;
  offset: number;
}

/** An artifact as the REST lists send it: its ready-to-send text and what the per-caller fields come from. */
export interface ReadyArtifact {
  id: string;
  kind: ArtifactKind;
  workspace_id: string;
  created_by: string;
  /** The stored ready-to-send form (shared/api-document.ts); serialized from the document for a row without one. */
  api_json: string;
  /** Its relationships and masked identity as stored ready (shared/relationship-forms.ts), when the row has them. */
  extras?: ReadyExtras;
}

export interface RelationshipsWithEnds {
  relationships: Relationship[];
  /** Artifact id to workspace id, for every other end of `relationships` that is a known artifact. */
  otherEndWorkspaces: Map<string, string>;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export type ToolGroupField =
  'server_id' | 'provider_kind' | 'owner' | 'workspace_id' | 'artifact_status' | 'is_system' | 'source_type';

export interface ToolAggregateQuery {
  workspaceIds: readonly string[];
  groupBy: ToolGroupField[];
  /** Equality filters on group fields; an array value means "any of". */
  filters: { field: ToolGroupField; values: (string | boolean)[] }[];
  limit: number;
  offset: number;
}

export interface ToolGroup {
  /** One entry per `groupBy` field; a missing value is null. */
  key: Record<string, string | boolean | null>;
  count: number;
  /** Distinct non-null `server_id` values in the group. */
  servers: number;
  latest_updated_at: string | null;
}

/** A tool as telemetry names it: its aggregate group key, tool name (`tool_name`, else `name`) and server. */
export interface ToolRef {
  key: Record<string, string | boolean | null>;
  tool: string;
  server: string | null;
}

/** Counts of latest artifact versions by kind, keyed by the id counted over. */
export type KindCounts = Map<string, Record<string, number>>;

export interface ImportCounts {
  organizations: number;
  users: number;
  workspaces: number;
  memberships: number;
  projects: number;
  repos: number;
  artifacts: number;
  relationships: number;
  mcp_servers: number;
}

export interface RegistryStore extends McpServerStore {
  readonly engine: 'sqlite' | 'postgres';
  /** Insights, webhook subscriptions and their outbox, in the same database (insight-port.ts). */
  readonly insights: InsightStore;
  /** The organization's agents and detection's page positions (detection-state-port.ts). */
  readonly detection: DetectionState;
  /** Cheap round trip; throws when the store cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * A token that changes whenever stored data a reader sees changes, by this process or any other
   * (an import from the CLI while the service runs); bookkeeping writes that change no answer (the
   * webhook outbox and its subscriptions' health, detection's cursors and leases) leave it.
   * Response caches compare it on every read.
   */
  generation(): Promise<string>;
  /** What the store holds on disk, by part (store/stored-bytes.ts): cheap, for the /metrics gauges. */
  storedBytes(): Promise<StoredBytes>;
  /** True when no organization exists yet (first start: seed demo data). */
  isEmpty(): Promise<boolean>;
  importBundle(bundle: Bundle): Promise<ImportCounts>;

  // Directory
  getOrganizations(ids: readonly string[]): Promise<Organization[]>;
  getUsers(ids: readonly string[]): Promise<User[]>;
  /** Users of an org ordered by id. */
  listUsers(orgId: string, limit: number, offset: number): Promise<Page<User>>;

  // Workspace tree, memberships, projects
  /** Every workspace of an org (the tree is small enough to hold per request). */
  listOrgWorkspaces(orgId: string): Promise<Workspace[]>;
  getWorkspaces(ids: readonly string[]): Promise<Workspace[]>;
  getMembershipsOfUser(userId: string): Promise<Membership[]>;
  getMembershipsOfWorkspaces(workspaceIds: readonly string[]): Promise<Membership[]>;
  getProjects(ids: readonly string[]): Promise<Project[]>;
  /** Projects whose workspace is one of these, ordered by id. */
  listProjects(workspaceIds: readonly string[]): Promise<Project[]>;

  // Source repositories
  getRepos(ids: readonly string[]): Promise<Repo[]>;
  /** Repositories whose workspace is one of these, ordered by id. */
  listRepos(workspaceIds: readonly string[]): Promise<Repo[]>;
  /** Every latest artifact synced from one of these repositories (in any workspace), ordered by id. */
  listArtifactsOfRepos(repoIds: readonly string[]): Promise<ArtifactVersion[]>;

  // Artifacts
  /**
   * Latest tools whose `server_id` is one of `serverIds`, held by these workspaces, ordered by
   * `server_id`, `name`, `id` (an empty list of either reads nothing).
   */
  listToolsOfServers(workspaceIds: readonly string[], serverIds: readonly string[]): Promise<ArtifactVersion[]>;
  findArtifacts(query: ArtifactQuery): Promise<Page<ArtifactVersion>>;
  /** The same page in the ready-to-send form only (the REST lists): no document is read. */
  findReadyArtifacts(query: ArtifactQuery): Promise<Page<ReadyArtifact>>;
  /** Every latest artifact in these workspaces (optionally of one kind), ordered by id. */
  listArtifacts(workspaceIds: readonly string[], kind?: ArtifactKind): Promise<ArtifactVersion[]>;
  /** Latest versions by id. */
  getArtifacts(ids: readonly string[]): Promise<ArtifactVersion[]>;
  /** Every version of these ids, ordered by id then version_ordinal. */
  getArtifactVersions(ids: readonly string[]): Promise<ArtifactVersion[]>;
  /** Latest skill of that name (exact) in these workspaces, if any. */
  findSkillByName(workspaceIds: readonly string[], name: string): Promise<ArtifactVersion | null>;
  aggregateTools(query: ToolAggregateQuery): Promise<Page<ToolGroup>>;
  /** The distinct tool refs of the tools `aggregateTools` groups (offset ignored), at most `limit`. */
  toolRefs(query: ToolAggregateQuery): Promise<ToolRef[]>;
  /**
   * Latest-artifact counts by kind per workspace, project or creator (`created_by`); with `within`,
   * only artifacts held by those workspaces (a caller's readable scope: a project or a creator has
   * artifacts in other workspaces, and other organizations, than the caller can read).
   */
  countArtifacts(
    by: 'workspace' | 'project' | 'creator',
    ids: readonly string[],
    within?: readonly string[],
  ): Promise<KindCounts>;
  countMembers(workspaceIds: readonly string[]): Promise<Map<string, number>>;
  /** Relationships whose `from.id` or `to.id` is one of these. */
  getRelationships(artifactIds: readonly string[]): Promise<Relationship[]>;
  /**
   * `getRelationships`, and the workspace of each of their other ends (not among `artifactIds`) that
   * is a known artifact (its latest version; an unknown end has none): whether a caller may see a
   * relationship depends on it.
   */
  getRelationshipsWithEnds(artifactIds: readonly string[]): Promise<RelationshipsWithEnds>;

  // Identities and images
  getIdentitiesOfAgents(agentIds: readonly string[]): Promise<Identity[]>;
  findIdentityByClientId(clientId: string): Promise<Identity | null>;
  findIdentityByApiKeyHash(hash: string): Promise<Identity | null>;
  getProfileImage(agentId: string): Promise<ProfileImage | null>;
}
