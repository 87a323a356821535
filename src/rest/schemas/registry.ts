/** Response schemas of workspaces, projects and directory users (specification resource tables). */
import { namedRefSchema } from '../../domain/artifact-schemas.ts';

const str = { type: 'string' } as const;
const counts = { type: 'object', additionalProperties: { type: 'integer' } } as const;
const containerPermissions = {
  type: 'object',
  properties: Object.fromEntries(
    [
      'can_create_content',
      'can_delete',
      'can_discover',
      'can_join',
      'can_leave',
      'can_manage_members',
      'can_read',
      'can_update',
    ].map((k) => [k, { type: 'boolean' }]),
  ),
} as const;

export const workspaceSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'display_name',
    'kind',
    'workspace_status',
    'root_workspace_id',
    'created_at',
    'created_by',
    'updated_at',
    'updated_by',
  ],
  properties: {
    id: str,
    name: str,
    display_name: str,
    kind: str,
    workspace_status: str,
    root_workspace_id: str,
    created_at: str,
    created_by: str,
    updated_at: str,
    updated_by: str,
    artifact_count: { type: 'integer' },
    artifact_count_by_kind: counts,
    effective_role: str,
    member_count: { type: 'integer' },
    parent_id: str,
    parent: namedRefSchema,
    root_workspace: namedRefSchema,
    permissions: containerPermissions,
  },
} as const;

export const projectSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'display_name',
    'project_status',
    'workspace_id',
    'root_workspace_id',
    'created_at',
    'created_by',
    'updated_at',
    'updated_by',
  ],
  properties: {
    id: str,
    name: str,
    display_name: str,
    project_status: str,
    workspace_id: str,
    root_workspace_id: str,
    created_at: str,
    created_by: str,
    updated_at: str,
    updated_by: str,
    artifact_count: { type: 'integer' },
    artifact_count_by_kind: counts,
    knowledge_urls: { type: 'array', items: str },
    permissions: containerPermissions,
    root_workspace: namedRefSchema,
    workspace: namedRefSchema,
  },
} as const;

export const directoryUserSchema = {
  type: 'object',
  required: ['id', 'created_at', 'updated_at'],
  properties: {
    id: str,
    created_at: str,
    updated_at: str,
    name: str,
    email: str,
    artifact_count: { type: 'integer' },
    artifact_count_by_kind: counts,
    enrichment: {
      type: 'object',
      required: ['enrichment_status'],
      properties: {
        enrichment_status: str,
        enriched_at: str,
        error_class: str,
        provider: str,
        reason: str,
        stamped_at: str,
        grounding: { type: 'object', additionalProperties: true },
        profile: {
          type: 'object',
          properties: Object.fromEntries(
            [
              'company',
              'department',
              'full_name',
              'github_url',
              'linkedin_url',
              'sub_department',
              'title',
              'twitter_url',
              'website_url',
            ].map((k) => [k, str]),
          ),
        },
      },
    },
  },
} as const;
