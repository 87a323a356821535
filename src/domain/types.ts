/**
 * Domain types of the registry (DESIGN §5), shared by stores, handlers and transports.
 * Field names follow the REST API (snake_case) so that stores and transports map 1:1.
 */

type OrgStatus = 'active' | 'suspended';
export type Role = 'admin' | 'editor' | 'viewer';
export type ArtifactKind = 'agent' | 'tool' | 'skill' | 'prompt' | 'document';
export const ARTIFACT_KINDS: readonly ArtifactKind[] = ['agent', 'tool', 'skill', 'prompt', 'document'];

/** The fields every artifact version has (the "always present" ones of the specification's Artifact table). */
export const ARTIFACT_REQUIRED_FIELDS = [
  'id',
  'name',
  'kind',
  'artifact_status',
  'source_type',
  'extension',
  'content_hash_hex',
  'commit_ts',
  'created_at',
  'created_by',
  'updated_at',
  'updated_by',
  'version_ordinal',
  'is_latest',
  'workspace_id',
] as const;

export interface Organization {
  id: string;
  name: string;
  status: OrgStatus;
}

export interface Enrichment {
  enrichment_status: string;
  enriched_at?: string;
  error_class?: string;
  provider?: string;
  reason?: string;
  stamped_at?: string;
  grounding?: Record<string, unknown>;
  profile?: Record<string, string>;
}

export interface User {
  id: string;
  org_id: string;
  name?: string;
  email?: string;
  status: OrgStatus;
  created_at: string;
  updated_at: string;
  enrichment?: Enrichment;
}

export interface Workspace {
  id: string;
  org_id: string;
  name: string;
  display_name: string;
  kind: string;
  workspace_status: string;
  parent_id?: string;
  root_workspace_id: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

export interface Membership {
  workspace_id: string;
  user_id: string;
  role: Role;
}

export interface Project {
  id: string;
  workspace_id: string;
  name: string;
  display_name: string;
  project_status: string;
  knowledge_urls?: string[];
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

/**
 * A source repository artifacts are synced from. It belongs to a workspace and is read by whoever
 * can read that workspace; its artifacts may sit in any workspace of the same organization.
 */
export interface Repo {
  id: string;
  workspace_id: string;
  name: string;
  display_name: string;
  source_uri: string;
  default_branch?: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

/** An agent's service account. The API key itself is never kept: only its hash and last 4 chars. */
export interface Identity {
  agent_id: string;
  client_id: string;
  credential_kind: 'oidc_client' | 'api_key';
  api_key_hash?: string;
  api_key_last4?: string;
  expires_at?: string;
  revoked?: boolean;
}

/**
 * One version of an artifact as stored: every field of the REST resource except the computed
 * ones (`permissions`, `relationships`, `identity`), plus the kind-specific fields, in `doc`.
 * `doc` holds exactly what the API returns for those fields (snake_case keys).
 */
export interface ArtifactVersion {
  id: string;
  version_ordinal: number;
  is_latest: boolean;
  kind: ArtifactKind;
  name: string;
  display_name?: string;
  workspace_id: string;
  project_id?: string;
  /** The repository it was synced from (also in `doc`, as the API returns it). */
  repo_id?: string;
  artifact_status: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
  /** Tools only (denormalised for aggregation); copies of fields in `doc`. */
  server_id?: string;
  /** The whole API-shaped artifact minus computed fields. */
  doc: Record<string, unknown>;
}

interface RelationshipEnd {
  id: string;
  kind: string;
}

export interface Relationship {
  from: RelationshipEnd;
  to: RelationshipEnd;
  rel_type: string;
  provenance: string;
  relationship_status: string;
  label?: string;
  role?: string;
  weight?: number;
  confidence?: number;
  attributes?: Record<string, unknown>;
}

export interface ProfileImage {
  content_type: string;
  bytes: Uint8Array;
}

/** A bundle as `npm run import` and the demo seed load it (DESIGN §11), already validated. */
export interface Bundle {
  organizations: Organization[];
  users: User[];
  workspaces: Omit<Workspace, 'root_workspace_id'>[];
  memberships: Membership[];
  projects: Project[];
  repos: Repo[];
  artifacts: ArtifactVersion[];
  identities: Identity[];
  relationships: Relationship[];
  profile_images: ({ agent_id: string } & ProfileImage)[];
  mcp_servers: McpServerEntry[];
}

/** Lifecycle of an MCP server version, as the MCP Registry API names it. */
export type McpServerStatus = 'active' | 'deprecated' | 'deleted';
export const MCP_SERVER_STATUSES: readonly McpServerStatus[] = ['active', 'deprecated', 'deleted'];

/**
 * One published version of an MCP server: the `server.json` document exactly as published (MCP
 * Registry, server.schema.json 2025-12-11), plus the registry's own fields. `id` is unique within an
 * organization and is what tools name as `server_id` and spans as `mcp.server.name`; `name` (the
 * document's reverse-DNS `namespace/name`) is unique within an organization too, so one id holds
 * one name across all its versions.
 */
export interface McpServerVersion {
  id: string;
  org_id: string;
  workspace_id: string;
  /** Copies of `server.name` and `server.version`. */
  name: string;
  version: string;
  /** The server.json document as published, unchanged. */
  server: Record<string, unknown>;
  status: McpServerStatus;
  /** Semver-greatest non-deleted version of the name; when a version is not semver, the last published. */
  is_latest: boolean;
  published_at: string;
  updated_at: string;
  status_changed_at: string;
  created_by: string;
  updated_by: string;
}

/**
 * An MCP server version as a bundle brings it (section `mcp_servers`): the organization is its
 * workspace's. A re-import updates the stored version in place.
 */
export interface McpServerEntry {
  id: string;
  org_id: string;
  workspace_id: string;
  /** The server.json document, stored as given. */
  server: Record<string, unknown>;
  status: McpServerStatus;
  /** Absent: the time of the import that first stores the version (a re-import keeps it). */
  published_at?: string;
  created_by: string;
}
