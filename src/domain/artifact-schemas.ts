/**
 * Response schemas of artifacts (agents, tools, exported artifacts) exactly as the
 * specification's resource tables list them.
 */
import { ARTIFACT_REQUIRED_FIELDS } from './types.ts';

const str = { type: 'string' } as const;
const freeObject = { type: 'object', additionalProperties: true } as const;

const relationshipEnd = { type: 'object', properties: { id: str, kind: str } } as const;

const relationshipSchema = {
  type: 'object',
  required: ['direction', 'provenance', 'rel_type', 'relationship_status'],
  properties: {
    direction: str,
    provenance: str,
    rel_type: str,
    relationship_status: str,
    attributes: freeObject,
    confidence: { type: 'number' },
    from: relationshipEnd,
    to: relationshipEnd,
    label: str,
    role: str,
    weight: { type: 'number' },
  },
} as const;

const relationshipsSchema = {
  type: 'object',
  required: ['count', 'incoming', 'outgoing'],
  properties: {
    count: { type: 'integer' },
    incoming: { type: 'array', items: relationshipSchema },
    outgoing: { type: 'array', items: relationshipSchema },
  },
} as const;

const artifactRequired = ARTIFACT_REQUIRED_FIELDS;

const artifactProperties = {
  id: str,
  name: str,
  kind: str,
  artifact_status: str,
  source_type: str,
  extension: str,
  content_hash_hex: str,
  commit_ts: str,
  created_at: str,
  created_by: str,
  updated_at: str,
  updated_by: str,
  version_ordinal: { type: 'integer' },
  is_latest: { type: 'boolean' },
  workspace_id: str,
  display_name: str,
  identity: {
    type: 'object',
    description: 'The agent service account; api_key is always masked',
    properties: { client_id: str, credential_kind: str, api_key: str, expires_at: str },
  },
  oidc_client_id: str,
  owner_id: str,
  project_id: str,
  repo_id: str,
  source_created_at: str,
  source_created_by: str,
  source_digest: str,
  source_id: str,
  source_last_modified_at: str,
  source_last_modified_by: str,
  source_metadata: {},
  source_synced_at: str,
  source_uri: str,
  source_version: str,
  version_label: str,
  relationships: relationshipsSchema,
} as const;

/** Any other kind (skills, prompts, …): the fields every artifact has. */
export const baseArtifactSchema = {
  type: 'object',
  required: [...artifactRequired],
  properties: artifactProperties,
} as const;

const permissionFlags = { type: 'object', additionalProperties: { type: 'boolean' } } as const;

export const agentSchema = {
  type: 'object',
  required: [...artifactRequired],
  properties: {
    ...artifactProperties,
    agent_framework_id: str,
    agent_provider_id: str,
    instructions: str,
    is_system: { type: 'boolean' },
    max_step_count: { type: 'integer' },
    model_id: str,
    tools: { type: 'array', items: { type: 'object', properties: { kind: str, name: str } } },
    permissions: permissionFlags,
    profile_image_url: str,
  },
} as const;

export const toolSchema = {
  type: 'object',
  required: [...artifactRequired],
  properties: {
    ...artifactProperties,
    input_schema: freeObject,
    output_schema: freeObject,
    is_system: { type: 'boolean' },
    owner: str,
    provider_kind: str,
    server_id: str,
    tool_name: str,
    permissions: permissionFlags,
  },
} as const;

const named = { type: 'object', properties: { display_name: str, id: str, name: str } } as const;

/** Exported artifacts keep their kind-specific fields too (agents' instructions, tools' schemas). */
export const exportedArtifactSchema = {
  type: 'object',
  required: [...artifactRequired, 'display_name'],
  additionalProperties: true,
  properties: {
    ...artifactProperties,
    metadata: freeObject,
    permissions: {
      type: 'object',
      properties: Object.fromEntries(
        [
          'can_add_relationship',
          'can_create_version',
          'can_delete',
          'can_edit',
          'can_link',
          'can_read',
          'can_remove_relationship',
          'can_unlink',
        ].map((k) => [k, { type: 'boolean' }]),
      ),
    },
    project: { type: 'object', properties: { display_name: str, id: str, name: str, workspace_id: str } },
    repo: { type: 'object', properties: { display_name: str, id: str, name: str, source_uri: str, workspace_id: str } },
    workspace: named,
  },
} as const;

export const namedRefSchema = named;
