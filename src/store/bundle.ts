/**
 * Validation of an import bundle (DESIGN §11). `parseBundle` either returns a Bundle every engine
 * can write as is, or throws a BundleError naming the first offending JSON path: a bundle that
 * breaks a rule is rejected whole. A bundle is self-contained: every reference (organization,
 * parent workspace, membership, project, artifact workspace/project, relationship endpoint) must
 * name an object of the same bundle. API keys given in clear are hashed here and never kept.
 */
import { hashApiKey } from '../shared/api-key.ts';
import { compact } from '../shared/compact.ts';
import {
  ARTIFACT_KINDS,
  type ArtifactKind,
  type ArtifactVersion,
  type Bundle,
  type Enrichment,
  type Identity,
  type Membership,
  type Organization,
  type Project,
  type Relationship,
  type User,
} from '../domain/types.ts';

/** A broken bundle rule; `path` is the JSON path of the offending value (`artifacts[12].workspace_id`). */
export class BundleError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'BundleError';
    this.path = path;
  }
}

type Obj = Record<string, unknown>;
/** The field types a bundle declares, and the value each one is once checked. */
interface FieldValues {
  string: string;
  timestamp: string;
  boolean: boolean;
  integer: number;
  number: number;
  object: Obj;
  array: unknown[];
  any: unknown;
}
type FieldType = keyof FieldValues;

const ORG_STATUSES = ['active', 'suspended'] as const;
const WORKSPACE_KINDS = ['org', 'team', 'user_default'] as const;
const WORKSPACE_STATUSES = ['active', 'archived'] as const;
const ROLES = ['admin', 'editor', 'viewer'] as const;
const ARTIFACT_STATUSES = ['draft', 'active', 'deprecated', 'archived'] as const;
const CREDENTIAL_KINDS = ['oidc_client', 'api_key'] as const;
const REL_TYPES = ['uses_tool', 'uses_skill', 'depends_on', 'derived_from', 'references'] as const;
const PROVENANCES = ['declared', 'inferred', 'observed'] as const;
const REL_STATUSES = ['active', 'removed'] as const;

/** RFC 3339 date-time (the form every timestamp of the API takes). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** The "always present" strings of the specification's Artifact table. */
const ARTIFACT_REQUIRED: Record<string, FieldType> = {
  id: 'string',
  name: 'string',
  kind: 'string',
  artifact_status: 'string',
  source_type: 'string',
  extension: 'string',
  content_hash_hex: 'string',
  commit_ts: 'timestamp',
  created_at: 'timestamp',
  created_by: 'string',
  updated_at: 'timestamp',
  updated_by: 'string',
  workspace_id: 'string',
};

/** Optional artifact fields (common, agent, tool, exported) and their types, checked when present. */
const ARTIFACT_OPTIONAL: Record<string, FieldType> = {
  display_name: 'string',
  oidc_client_id: 'string',
  owner_id: 'string',
  project_id: 'string',
  repo_id: 'string',
  source_created_at: 'string',
  source_created_by: 'string',
  source_digest: 'string',
  source_id: 'string',
  source_last_modified_at: 'string',
  source_last_modified_by: 'string',
  source_metadata: 'any',
  source_synced_at: 'string',
  source_uri: 'string',
  source_version: 'string',
  version_label: 'string',
  metadata: 'object',
  permissions: 'object',
  identity: 'object',
  profile_image_base64: 'string',
  agent_framework_id: 'string',
  agent_provider_id: 'string',
  instructions: 'string',
  is_system: 'boolean',
  max_step_count: 'integer',
  model_id: 'string',
  tools: 'array',
  profile_image_url: 'string',
  input_schema: 'object',
  output_schema: 'object',
  owner: 'string',
  provider_kind: 'string',
  server_id: 'string',
  tool_name: 'string',
};

/** Fields the API computes per caller or per request: never kept in an artifact's `doc`. */
const COMPUTED = new Set(['identity', 'permissions', 'relationships', 'profile_image_base64']);

function isType(v: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string' && v !== '';
    case 'timestamp':
      return typeof v === 'string' && TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v));
    case 'boolean':
      return typeof v === 'boolean';
    case 'integer':
      return Number.isSafeInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'any':
      return true;
  }
}

const TYPE_NAMES: Record<FieldType, string> = {
  string: 'a non-empty string',
  timestamp: 'an RFC 3339 timestamp',
  boolean: 'a boolean',
  integer: 'an integer',
  number: 'a finite number',
  object: 'an object',
  array: 'an array',
  any: 'a JSON value',
};

function obj(v: unknown, at: string): Obj {
  if (!isType(v, 'object')) throw new BundleError(at, 'must be an object');
  return v as Obj;
}

function list(root: Obj, key: string): Obj[] {
  const v = root[key];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new BundleError(key, 'must be an array');
  return v.map((item, i) => obj(item, `${key}[${i}]`));
}

function req<K extends FieldType = 'string'>(o: Obj, key: string, at: string, type?: K): FieldValues[K] {
  const v = o[key];
  const t = type ?? 'string';
  if (!isType(v, t)) throw new BundleError(`${at}.${key}`, `must be ${TYPE_NAMES[t]}`);
  return v as FieldValues[K];
}

/** An optional field: absent or null -> undefined; otherwise it must have the type. */
function opt<K extends FieldType = 'string'>(o: Obj, key: string, at: string, type?: K): FieldValues[K] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const t = type ?? 'string';
  if (!isType(v, t)) throw new BundleError(`${at}.${key}`, `must be ${TYPE_NAMES[t]}`);
  return v as FieldValues[K];
}

function oneOf<T extends string>(o: Obj, key: string, at: string, allowed: readonly T[]): T {
  const v = req(o, key, at);
  if (!allowed.includes(v as T)) throw new BundleError(`${at}.${key}`, `must be one of ${allowed.join(', ')}`);
  return v as T;
}

function uniqueIds(items: { id: string }[], key: string): Set<string> {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.id)) throw new BundleError(`${key}[${i}].id`, `duplicate id ${item.id}`);
    seen.add(item.id);
  });
  return seen;
}

function ref(
  known: ReadonlySet<string> | ReadonlyMap<string, unknown>,
  id: string | undefined,
  at: string,
  what: string,
): void {
  if (id !== undefined && !known.has(id)) throw new BundleError(at, `unknown ${what} ${id}`);
}

function sniffImageType(b: Uint8Array): string | null {
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'image/png';
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46) return 'image/gif';
  if (b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57 && b[9] === 0x45) return 'image/webp';
  return null;
}

function parseUser(u: Obj, at: string, orgIds: Set<string>): User {
  const enrichment = opt(u, 'enrichment', at, 'object');
  if (enrichment !== undefined) {
    const e = `${at}.enrichment`;
    req(enrichment, 'enrichment_status', e);
    for (const k of ['enriched_at', 'error_class', 'provider', 'reason', 'stamped_at']) opt(enrichment, k, e);
    opt(enrichment, 'grounding', e, 'object');
    const profile = opt(enrichment, 'profile', e, 'object');
    if (profile !== undefined) for (const k of Object.keys(profile)) opt(profile, k, `${e}.profile`);
  }
  const user: User = compact({
    id: req(u, 'id', at),
    org_id: req(u, 'org_id', at),
    name: opt(u, 'name', at),
    email: opt(u, 'email', at),
    status: u.status === undefined ? 'active' : oneOf(u, 'status', at, ORG_STATUSES),
    created_at: req(u, 'created_at', at, 'timestamp'),
    updated_at: req(u, 'updated_at', at, 'timestamp'),
    enrichment: enrichment as Enrichment | undefined,
  });
  ref(orgIds, user.org_id, `${at}.org_id`, 'organization');
  return user;
}

function parseWorkspaces(root: Obj, orgIds: Set<string>): Bundle['workspaces'] {
  const workspaces = list(root, 'workspaces').map((w, i) => {
    const at = `workspaces[${i}]`;
    return compact({
      id: req(w, 'id', at),
      org_id: req(w, 'org_id', at),
      name: req(w, 'name', at),
      display_name: req(w, 'display_name', at),
      kind: oneOf(w, 'kind', at, WORKSPACE_KINDS),
      workspace_status: oneOf(w, 'workspace_status', at, WORKSPACE_STATUSES),
      parent_id: opt(w, 'parent_id', at),
      created_at: req(w, 'created_at', at, 'timestamp'),
      created_by: req(w, 'created_by', at),
      updated_at: req(w, 'updated_at', at, 'timestamp'),
      updated_by: req(w, 'updated_by', at),
    });
  });
  uniqueIds(workspaces, 'workspaces');
  const byId = new Map(workspaces.map((w) => [w.id, w]));
  workspaces.forEach((w, i) => {
    const at = `workspaces[${i}]`;
    ref(orgIds, w.org_id, `${at}.org_id`, 'organization');
    ref(byId, w.parent_id, `${at}.parent_id`, 'workspace');
    if (w.parent_id !== undefined && byId.get(w.parent_id)?.org_id !== w.org_id) {
      throw new BundleError(`${at}.parent_id`, 'parent belongs to another organization');
    }
    const seen = new Set([w.id]);
    for (let p = w.parent_id; p !== undefined; p = byId.get(p)?.parent_id) {
      if (seen.has(p)) throw new BundleError(`${at}.parent_id`, 'the workspace tree has a cycle');
      seen.add(p);
    }
  });
  return workspaces;
}

interface ArtifactContext {
  orgOfWorkspace: Map<string, string>;
  projects: Map<string, Project>;
}

function checkArtifactFields(a: Obj, at: string): void {
  for (const [key, type] of Object.entries(ARTIFACT_REQUIRED)) req(a, key, at, type);
  for (const [key, type] of Object.entries(ARTIFACT_OPTIONAL)) opt(a, key, at, type);
  if (!/^[0-9a-f]{64}$/i.test(a.content_hash_hex as string))
    throw new BundleError(`${at}.content_hash_hex`, 'must be 64 hex digits (sha256)');
  if (Array.isArray(a.tools)) {
    a.tools.forEach((t, j) => {
      const tool = obj(t, `${at}.tools[${j}]`);
      req(tool, 'kind', `${at}.tools[${j}]`);
      req(tool, 'name', `${at}.tools[${j}]`);
    });
  }
}

function toVersion(a: Obj, kind: ArtifactKind, at: string, ctx: ArtifactContext): ArtifactVersion {
  const workspaceId = a.workspace_id as string;
  ref(ctx.orgOfWorkspace, workspaceId, `${at}.workspace_id`, 'workspace');
  const projectId = opt(a, 'project_id', at);
  ref(ctx.projects, projectId, `${at}.project_id`, 'project');
  if (projectId !== undefined) {
    const projectOrg = ctx.orgOfWorkspace.get(ctx.projects.get(projectId)?.workspace_id ?? '');
    if (projectOrg !== ctx.orgOfWorkspace.get(workspaceId))
      throw new BundleError(`${at}.project_id`, 'project belongs to another organization');
  }
  const doc: Obj = {};
  for (const [k, v] of Object.entries(a)) {
    if (COMPUTED.has(k)) continue;
    if (v === null && ARTIFACT_OPTIONAL[k] !== undefined && ARTIFACT_OPTIONAL[k] !== 'any') continue;
    doc[k] = v;
  }
  return compact({
    id: a.id as string,
    version_ordinal: a.version_ordinal as number,
    is_latest: a.is_latest as boolean,
    kind,
    name: a.name as string,
    display_name: opt(a, 'display_name', at),
    workspace_id: workspaceId,
    project_id: projectId,
    artifact_status: a.artifact_status as string,
    created_at: a.created_at as string,
    created_by: a.created_by as string,
    updated_at: a.updated_at as string,
    updated_by: a.updated_by as string,
    server_id: kind === 'tool' ? opt(a, 'server_id', at) : undefined,
    doc,
  });
}

function parseIdentity(o: Obj, agentId: string, at: string): Identity {
  const kind = oneOf(o, 'credential_kind', at, CREDENTIAL_KINDS);
  const key = opt(o, 'api_key', at);
  if (kind === 'api_key' && key === undefined)
    throw new BundleError(`${at}.api_key`, 'is required when credential_kind is api_key');
  if (kind !== 'api_key' && key !== undefined)
    throw new BundleError(`${at}.api_key`, 'is only allowed when credential_kind is api_key');
  if (key !== undefined && (key.length < 16 || /[.\s]/.test(key))) {
    throw new BundleError(`${at}.api_key`, 'must be at least 16 characters without dots or spaces');
  }
  return compact({
    agent_id: agentId,
    client_id: req(o, 'client_id', at),
    credential_kind: kind,
    api_key_hash: key === undefined ? undefined : hashApiKey(key),
    api_key_last4: key?.slice(-4),
    expires_at: opt(o, 'expires_at', at, 'timestamp'),
    revoked: opt(o, 'revoked', at, 'boolean') === true ? true : undefined,
  });
}

interface ParsedArtifacts {
  artifacts: ArtifactVersion[];
  identities: Identity[];
  images: Bundle['profile_images'];
  /** Kind of every artifact id. */
  kinds: Map<string, ArtifactKind>;
}

function parseArtifacts(root: Obj, ctx: ArtifactContext): ParsedArtifacts {
  const out: ParsedArtifacts = { artifacts: [], identities: [], images: [], kinds: new Map() };
  const versions = new Set<string>();
  const latest = new Set<string>();
  const clientIds = new Set<string>();
  const keyHashes = new Set<string>();
  list(root, 'artifacts').forEach((a, i) => {
    const at = `artifacts[${i}]`;
    checkArtifactFields(a, at);
    const kind = oneOf(a, 'kind', at, ARTIFACT_KINDS);
    oneOf(a, 'artifact_status', at, ARTIFACT_STATUSES);
    const ordinal = req(a, 'version_ordinal', at, 'integer');
    if (ordinal < 1) throw new BundleError(`${at}.version_ordinal`, 'must be an integer >= 1');
    const isLatest = req(a, 'is_latest', at, 'boolean');
    const id = a.id as string;
    const versionKey = `${id}@${ordinal}`;
    if (versions.has(versionKey)) throw new BundleError(`${at}.version_ordinal`, `duplicate version ${versionKey}`);
    versions.add(versionKey);
    if ((out.kinds.get(id) ?? kind) !== kind) throw new BundleError(`${at}.kind`, `versions of ${id} differ in kind`);
    out.kinds.set(id, kind);
    if (isLatest) {
      if (latest.has(id)) throw new BundleError(`${at}.is_latest`, `artifact ${id} has more than one latest version`);
      latest.add(id);
    }
    out.artifacts.push(toVersion(a, kind, at, ctx));

    if (a.identity !== undefined && a.identity !== null) {
      if (kind !== 'agent') throw new BundleError(`${at}.identity`, 'only agents have identities');
      const identity = parseIdentity(a.identity as Obj, id, `${at}.identity`);
      if (isLatest) {
        if (clientIds.has(identity.client_id))
          throw new BundleError(`${at}.identity.client_id`, `duplicate client id ${identity.client_id}`);
        clientIds.add(identity.client_id);
        if (identity.api_key_hash !== undefined) {
          if (keyHashes.has(identity.api_key_hash))
            throw new BundleError(`${at}.identity.api_key`, 'duplicate api key');
          keyHashes.add(identity.api_key_hash);
        }
        out.identities.push(identity);
      }
    }
    const image = opt(a, 'profile_image_base64', at);
    if (image !== undefined) {
      if (kind !== 'agent') throw new BundleError(`${at}.profile_image_base64`, 'only agents have profile images');
      const bytes = new Uint8Array(Buffer.from(image, 'base64'));
      const type = /^[A-Za-z0-9+/]+={0,2}$/.test(image) ? sniffImageType(bytes) : null;
      if (type === null)
        throw new BundleError(`${at}.profile_image_base64`, 'must be a base64 PNG, JPEG, GIF or WebP image');
      if (isLatest) out.images.push({ agent_id: id, content_type: type, bytes });
    }
  });
  for (const id of out.kinds.keys()) {
    if (!latest.has(id)) throw new BundleError('artifacts', `artifact ${id} has no latest version`);
  }
  return out;
}

function parseRelationships(root: Obj, kinds: Map<string, ArtifactKind>): Relationship[] {
  const seen = new Set<string>();
  return list(root, 'relationships').map((r, i) => {
    const at = `relationships[${i}]`;
    const end = (key: 'from' | 'to') => {
      const o = obj(r[key], `${at}.${key}`);
      const id = req(o, 'id', `${at}.${key}`);
      const kind = req(o, 'kind', `${at}.${key}`);
      ref(kinds, id, `${at}.${key}.id`, 'artifact');
      if (kinds.get(id) !== kind)
        throw new BundleError(`${at}.${key}.kind`, `artifact ${id} is a ${kinds.get(id)}, not a ${kind}`);
      return { id, kind };
    };
    const rel: Relationship = compact({
      from: end('from'),
      to: end('to'),
      rel_type: oneOf(r, 'rel_type', at, REL_TYPES),
      provenance: oneOf(r, 'provenance', at, PROVENANCES),
      relationship_status: oneOf(r, 'relationship_status', at, REL_STATUSES),
      label: opt(r, 'label', at),
      role: opt(r, 'role', at),
      weight: opt(r, 'weight', at, 'number'),
      confidence: opt(r, 'confidence', at, 'number'),
      attributes: opt(r, 'attributes', at, 'object'),
    });
    const key = JSON.stringify([rel.from.id, rel.to.id, rel.rel_type]);
    if (seen.has(key)) throw new BundleError(at, `duplicate relationship ${rel.from.id} ${rel.rel_type} ${rel.to.id}`);
    seen.add(key);
    return rel;
  });
}

/** Validates a raw bundle (API field names, DESIGN §11) and returns it in the stores' shape. */
export function parseBundle(input: unknown): Bundle {
  const root = obj(input, '$');
  const organizations: Organization[] = list(root, 'organizations').map((o, i) => ({
    id: req(o, 'id', `organizations[${i}]`),
    name: req(o, 'name', `organizations[${i}]`),
    status: oneOf(o, 'status', `organizations[${i}]`, ORG_STATUSES),
  }));
  const orgIds = uniqueIds(organizations, 'organizations');

  const users = list(root, 'users').map((u, i) => parseUser(u, `users[${i}]`, orgIds));
  uniqueIds(users, 'users');
  const orgOfUser = new Map(users.map((u) => [u.id, u.org_id]));

  const workspaces = parseWorkspaces(root, orgIds);
  const orgOfWorkspace = new Map(workspaces.map((w) => [w.id, w.org_id]));

  const pairs = new Set<string>();
  const memberships: Membership[] = list(root, 'memberships').map((m, i) => {
    const at = `memberships[${i}]`;
    const membership = {
      workspace_id: req(m, 'workspace_id', at),
      user_id: req(m, 'user_id', at),
      role: oneOf(m, 'role', at, ROLES),
    };
    ref(orgOfWorkspace, membership.workspace_id, `${at}.workspace_id`, 'workspace');
    ref(orgOfUser, membership.user_id, `${at}.user_id`, 'user');
    if (orgOfUser.get(membership.user_id) !== orgOfWorkspace.get(membership.workspace_id)) {
      throw new BundleError(`${at}.user_id`, 'user belongs to another organization than the workspace');
    }
    const pair = JSON.stringify([membership.workspace_id, membership.user_id]);
    if (pairs.has(pair))
      throw new BundleError(at, `duplicate membership of ${membership.user_id} in ${membership.workspace_id}`);
    pairs.add(pair);
    return membership;
  });

  const projects: Project[] = list(root, 'projects').map((p, i) => {
    const at = `projects[${i}]`;
    const urls = opt(p, 'knowledge_urls', at, 'array');
    urls?.forEach((u, j) => {
      if (!isType(u, 'string')) throw new BundleError(`${at}.knowledge_urls[${j}]`, `must be ${TYPE_NAMES.string}`);
    });
    const project: Project = compact({
      id: req(p, 'id', at),
      workspace_id: req(p, 'workspace_id', at),
      name: req(p, 'name', at),
      display_name: req(p, 'display_name', at),
      project_status: req(p, 'project_status', at),
      knowledge_urls: urls as string[] | undefined,
      created_at: req(p, 'created_at', at, 'timestamp'),
      created_by: req(p, 'created_by', at),
      updated_at: req(p, 'updated_at', at, 'timestamp'),
      updated_by: req(p, 'updated_by', at),
    });
    ref(orgOfWorkspace, project.workspace_id, `${at}.workspace_id`, 'workspace');
    return project;
  });
  uniqueIds(projects, 'projects');

  const parsed = parseArtifacts(root, { orgOfWorkspace, projects: new Map(projects.map((p) => [p.id, p])) });
  const relationships = parseRelationships(root, parsed.kinds);
  return {
    organizations,
    users,
    workspaces,
    memberships,
    projects,
    artifacts: parsed.artifacts,
    identities: parsed.identities,
    relationships,
    profile_images: parsed.images,
  };
}
