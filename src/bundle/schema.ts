/**
 * The shape of an import bundle (DESIGN §11) as a JSON Schema, validated by Ajv in bundle/shape-check.ts
 * before the checks of bundle/parse.ts that need more than one record (references, uniqueness, the
 * workspace tree, versions).
 * Optional fields may be null (read as absent); strings that identify or name must not be empty.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { ARTIFACT_KINDS, ARTIFACT_REQUIRED_FIELDS } from '../domain/types.ts';

const str = { type: 'string', minLength: 1 } as const;
const optStr = { type: ['string', 'null'], minLength: 1 } as const;
const timestamp = { type: 'string', format: 'timestamp' } as const;
const optTimestamp = { type: ['string', 'null'], format: 'timestamp' } as const;
const optObject = { type: ['object', 'null'] } as const;
const oneOf = <const T extends readonly string[]>(values: T) => ({ type: 'string', enum: values }) as const;
const list = <const S>(items: S) => ({ type: 'array', items }) as const;

const ORG_STATUSES = ['active', 'suspended'] as const;

const organization = {
  type: 'object',
  required: ['id', 'name', 'status'],
  properties: { id: str, name: str, status: oneOf(ORG_STATUSES) },
} as const;

const enrichment = {
  type: ['object', 'null'],
  required: ['enrichment_status'],
  properties: {
    enrichment_status: str,
    enriched_at: optStr,
    error_class: optStr,
    provider: optStr,
    reason: optStr,
    stamped_at: optStr,
    grounding: optObject,
    profile: { type: ['object', 'null'], additionalProperties: optStr },
  },
} as const;

const user = {
  type: 'object',
  required: ['id', 'org_id', 'created_at', 'updated_at'],
  properties: {
    id: str,
    org_id: str,
    name: optStr,
    email: optStr,
    status: oneOf(ORG_STATUSES),
    created_at: timestamp,
    updated_at: timestamp,
    enrichment,
  },
} as const;

const audit = { created_at: timestamp, created_by: str, updated_at: timestamp, updated_by: str } as const;
const AUDIT = ['created_at', 'created_by', 'updated_at', 'updated_by'] as const;

const workspace = {
  type: 'object',
  required: ['id', 'org_id', 'name', 'display_name', 'kind', 'workspace_status', ...AUDIT],
  properties: {
    id: str,
    org_id: str,
    name: str,
    display_name: str,
    kind: oneOf(['org', 'team', 'user_default']),
    workspace_status: oneOf(['active', 'archived']),
    parent_id: optStr,
    ...audit,
  },
} as const;

const membership = {
  type: 'object',
  required: ['workspace_id', 'user_id', 'role'],
  properties: { workspace_id: str, user_id: str, role: oneOf(['admin', 'editor', 'viewer']) },
} as const;

const project = {
  type: 'object',
  required: ['id', 'workspace_id', 'name', 'display_name', 'project_status', ...AUDIT],
  properties: {
    id: str,
    workspace_id: str,
    name: str,
    display_name: str,
    project_status: str,
    knowledge_urls: { type: ['array', 'null'], items: str },
    ...audit,
  },
} as const;

const repo = {
  type: 'object',
  required: ['id', 'workspace_id', 'name', 'display_name', 'source_uri', ...AUDIT],
  properties: {
    id: str,
    workspace_id: str,
    name: str,
    display_name: str,
    source_uri: str,
    default_branch: optStr,
    ...audit,
  },
} as const;

const identity = {
  type: ['object', 'null'],
  required: ['client_id', 'credential_kind'],
  properties: {
    client_id: str,
    credential_kind: oneOf(['oidc_client', 'api_key']),
    api_key: { type: ['string', 'null'], minLength: 16, pattern: '^[^.\\s]+$' },
    expires_at: optTimestamp,
    revoked: { type: ['boolean', 'null'] },
  },
} as const;

/** Optional artifact fields (common, agent, tool, exported): checked when present, null read as absent. */
export const ARTIFACT_OPTIONAL = {
  display_name: optStr,
  oidc_client_id: optStr,
  owner_id: optStr,
  project_id: optStr,
  repo_id: optStr,
  source_created_at: optStr,
  source_created_by: optStr,
  source_digest: optStr,
  source_id: optStr,
  source_last_modified_at: optStr,
  source_last_modified_by: optStr,
  source_metadata: {},
  source_synced_at: optStr,
  source_uri: optStr,
  source_version: optStr,
  version_label: optStr,
  metadata: optObject,
  permissions: optObject,
  identity,
  profile_image_base64: optStr,
  agent_framework_id: optStr,
  agent_provider_id: optStr,
  instructions: optStr,
  is_system: { type: ['boolean', 'null'] },
  max_step_count: { type: ['integer', 'null'], minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
  model_id: optStr,
  tools: {
    type: ['array', 'null'],
    items: { type: 'object', required: ['kind', 'name'], properties: { kind: str, name: str } },
  },
  profile_image_url: optStr,
  input_schema: optObject,
  output_schema: optObject,
  owner: optStr,
  provider_kind: optStr,
  server_id: optStr,
  tool_name: optStr,
} as const;

/** Artifact versions: the "always present" fields of the specification's Artifact table, then the optional ones. */
const artifact = {
  type: 'object',
  required: ARTIFACT_REQUIRED_FIELDS,
  properties: {
    id: str,
    version_ordinal: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    is_latest: { type: 'boolean' },
    name: str,
    kind: oneOf(ARTIFACT_KINDS),
    artifact_status: oneOf(['draft', 'active', 'deprecated', 'archived']),
    source_type: str,
    extension: str,
    content_hash_hex: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
    commit_ts: timestamp,
    workspace_id: str,
    ...audit,
    ...ARTIFACT_OPTIONAL,
  },
} as const;

const end = { type: 'object', required: ['id', 'kind'], properties: { id: str, kind: str } } as const;
const finite = { type: ['number', 'null'] } as const;

const relationship = {
  type: 'object',
  required: ['from', 'to', 'rel_type', 'provenance', 'relationship_status'],
  properties: {
    from: end,
    to: end,
    rel_type: oneOf(['uses_tool', 'uses_skill', 'depends_on', 'derived_from', 'references']),
    provenance: oneOf(['declared', 'inferred', 'observed']),
    relationship_status: oneOf(['active', 'removed']),
    label: optStr,
    role: optStr,
    weight: finite,
    confidence: finite,
    attributes: optObject,
  },
} as const;

/** An MCP server version: its server.json (checked by bundle/parse-mcp-servers.ts against server-json-schema.ts). */
const mcpServer = {
  type: 'object',
  required: ['id', 'workspace_id', 'server', 'created_by'],
  properties: {
    id: str,
    workspace_id: str,
    server: { type: 'object' },
    status: oneOf(['active', 'deprecated', 'deleted']),
    published_at: optTimestamp,
    created_by: str,
  },
} as const;

export const bundleSchema = {
  type: 'object',
  properties: {
    organizations: list(organization),
    users: list(user),
    workspaces: list(workspace),
    memberships: list(membership),
    projects: list(project),
    repos: list(repo),
    artifacts: list(artifact),
    relationships: list(relationship),
    mcp_servers: list(mcpServer),
  },
} as const;

/** A bundle that passed the schema. */
export type RawBundle = FromSchema<typeof bundleSchema>;
