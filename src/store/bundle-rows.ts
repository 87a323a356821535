/**
 * A validated bundle's objects as the parameter rows both registry engines' table writes insert
 * (sqlite/ and postgres/ import-bundle.ts, called in the import order of store/import-bundle.ts), in
 * the column order of their INSERT statements. Booleans differ per engine (SQLite stores 0/1): the
 * engine passes its own.
 */
import type { Bundle, Identity, Project, Relationship, Repo, User } from '../domain/types.ts';

type Value = string | number | boolean | null;

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
export const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** users (id, org_id, name, email, status, created_at, updated_at, enrichment) */
export const userRow = (u: User): Value[] => [
  u.id,
  u.org_id,
  orNull(u.name),
  orNull(u.email),
  u.status,
  u.created_at,
  u.updated_at,
  json(u.enrichment),
];

/** workspaces (id, org_id, parent_id, root_workspace_id, name, display_name, kind, workspace_status, audit) */
export const workspaceRow = (w: Bundle['workspaces'][number]): Value[] => [
  w.id,
  w.org_id,
  orNull(w.parent_id),
  w.id,
  w.name,
  w.display_name,
  w.kind,
  w.workspace_status,
  w.created_at,
  w.created_by,
  w.updated_at,
  w.updated_by,
];

/** projects (id, workspace_id, name, display_name, project_status, knowledge_urls, audit) */
export const projectRow = (p: Project): Value[] => [
  p.id,
  p.workspace_id,
  p.name,
  p.display_name,
  p.project_status,
  json(p.knowledge_urls),
  p.created_at,
  p.created_by,
  p.updated_at,
  p.updated_by,
];

/** repos (id, workspace_id, name, display_name, source_uri, default_branch, audit) */
export const repoRow = (r: Repo): Value[] => [
  r.id,
  r.workspace_id,
  r.name,
  r.display_name,
  r.source_uri,
  orNull(r.default_branch),
  r.created_at,
  r.created_by,
  r.updated_at,
  r.updated_by,
];

/** relationships (from_id, from_kind, to_id, to_kind, rel_type, provenance, relationship_status, label, role, weight, confidence, attributes) */
export const relationshipRow = (r: Relationship): Value[] => [
  r.from.id,
  r.from.kind,
  r.to.id,
  r.to.kind,
  r.rel_type,
  r.provenance,
  r.relationship_status,
  orNull(r.label),
  orNull(r.role),
  orNull(r.weight),
  orNull(r.confidence),
  json(r.attributes),
];

/** identities (agent_id, client_id, credential_kind, api_key_hash, api_key_last4, expires_at, revoked) */
export const identityRow = (i: Identity, bool: (b: boolean) => Value): Value[] => [
  i.agent_id,
  i.client_id,
  i.credential_kind,
  orNull(i.api_key_hash),
  orNull(i.api_key_last4),
  orNull(i.expires_at),
  bool(i.revoked === true),
];
