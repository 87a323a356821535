/**
 * Validation of an import bundle (DESIGN §11). `parseBundle` either returns a Bundle every engine
 * can write as is, or throws a BundleError naming the first offending path: a bundle that breaks
 * a rule is rejected whole. API keys given in clear are hashed here and never kept.
 */
import { createHash } from 'node:crypto';
import { ARTIFACT_KINDS, type ArtifactKind, type ArtifactVersion, type Bundle, type Identity } from '../domain/types.ts';

export class BundleError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'BundleError';
    this.path = path;
  }
}

type Obj = Record<string, unknown>;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function obj(v: unknown, at: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new BundleError(at, 'must be an object');
  return v as Obj;
}

function list(root: Obj, key: string): Obj[] {
  const v = root[key];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new BundleError(key, 'must be an array');
  return v.map((item, i) => obj(item, `${key}[${i}]`));
}

function str(o: Obj, key: string, at: string): string {
  const v = o[key];
  if (typeof v !== 'string' || v === '') throw new BundleError(`${at}.${key}`, 'must be a non-empty string');
  return v;
}

function optStr(o: Obj, key: string, at: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new BundleError(`${at}.${key}`, 'must be a string');
  return v;
}

function oneOf<T extends string>(o: Obj, key: string, at: string, allowed: readonly T[]): T {
  const v = str(o, key, at);
  if (!allowed.includes(v as T)) throw new BundleError(`${at}.${key}`, `must be one of ${allowed.join(', ')}`);
  return v as T;
}

function unique(ids: string[], key: string): Set<string> {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw new BundleError(`${key}[${i}].id`, `duplicate id ${id}`);
    seen.add(id);
  });
  return seen;
}

function ref(set: Set<string>, id: string | undefined, at: string, what: string): void {
  if (id !== undefined && !set.has(id)) throw new BundleError(at, `unknown ${what} ${id}`);
}

const ARTIFACT_STRINGS = ['id', 'name', 'kind', 'artifact_status', 'source_type', 'extension', 'content_hash_hex',
  'commit_ts', 'created_at', 'created_by', 'updated_at', 'updated_by', 'workspace_id'] as const;
const COMPUTED = ['identity', 'permissions', 'relationships', 'profile_image_base64'];

function sniffImageType(bytes: Uint8Array): string {
  if (bytes[0] === 0x89 && bytes[1] === 0x50) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  if (bytes[0] === 0x47 && bytes[1] === 0x49) return 'image/gif';
  if (bytes[8] === 0x57 && bytes[9] === 0x45) return 'image/webp';
  return 'application/octet-stream';
}

function parseIdentity(raw: unknown, agentId: string, at: string): Identity {
  const o = obj(raw, at);
  const identity: Identity = {
    agent_id: agentId,
    client_id: str(o, 'client_id', at),
    credential_kind: oneOf(o, 'credential_kind', at, ['oidc_client', 'api_key'] as const),
  };
  const key = optStr(o, 'api_key', at);
  if (key !== undefined) {
    if (key.length < 16 || key.includes('.')) throw new BundleError(`${at}.api_key`, 'must be at least 16 characters without a dot');
    identity.api_key_hash = hashApiKey(key);
    identity.api_key_last4 = key.slice(-4);
  }
  const expires = optStr(o, 'expires_at', at);
  if (expires !== undefined) identity.expires_at = expires;
  if (o.revoked === true) identity.revoked = true;
  return identity;
}

export function parseBundle(input: unknown): Bundle {
  const root = obj(input, '$');
  const organizations = list(root, 'organizations').map((o, i) => ({
    id: str(o, 'id', `organizations[${i}]`),
    name: str(o, 'name', `organizations[${i}]`),
    status: oneOf(o, 'status', `organizations[${i}]`, ['active', 'suspended'] as const),
  }));
  const orgIds = unique(organizations.map((o) => o.id), 'organizations');

  const users = list(root, 'users').map((u, i) => {
    const at = `users[${i}]`;
    const user = {
      id: str(u, 'id', at),
      org_id: str(u, 'org_id', at),
      status: u.status === undefined ? ('active' as const) : oneOf(u, 'status', at, ['active', 'suspended'] as const),
      created_at: str(u, 'created_at', at),
      updated_at: str(u, 'updated_at', at),
      ...(optStr(u, 'name', at) !== undefined ? { name: optStr(u, 'name', at) as string } : {}),
      ...(optStr(u, 'email', at) !== undefined ? { email: optStr(u, 'email', at) as string } : {}),
      ...(u.enrichment !== undefined ? { enrichment: obj(u.enrichment, `${at}.enrichment`) as unknown as Bundle['users'][number]['enrichment'] } : {}),
    };
    ref(orgIds, user.org_id, `${at}.org_id`, 'organization');
    return user;
  });
  const userIds = unique(users.map((u) => u.id), 'users');

  const workspaces = list(root, 'workspaces').map((w, i) => {
    const at = `workspaces[${i}]`;
    const parent = optStr(w, 'parent_id', at);
    return {
      id: str(w, 'id', at), org_id: str(w, 'org_id', at), name: str(w, 'name', at), display_name: str(w, 'display_name', at),
      kind: str(w, 'kind', at), workspace_status: str(w, 'workspace_status', at),
      ...(parent !== undefined ? { parent_id: parent } : {}),
      created_at: str(w, 'created_at', at), created_by: str(w, 'created_by', at),
      updated_at: str(w, 'updated_at', at), updated_by: str(w, 'updated_by', at),
    };
  });
  const wsIds = unique(workspaces.map((w) => w.id), 'workspaces');
  const wsById = new Map(workspaces.map((w) => [w.id, w]));
  workspaces.forEach((w, i) => {
    ref(orgIds, w.org_id, `workspaces[${i}].org_id`, 'organization');
    ref(wsIds, w.parent_id, `workspaces[${i}].parent_id`, 'workspace');
    const seen = new Set([w.id]);
    for (let p = w.parent_id; p !== undefined; p = wsById.get(p)?.parent_id) {
      if (seen.has(p)) throw new BundleError(`workspaces[${i}].parent_id`, 'the workspace tree has a cycle');
      if (wsById.get(p)?.org_id !== w.org_id) throw new BundleError(`workspaces[${i}].parent_id`, 'parent belongs to another organization');
      seen.add(p);
    }
  });

  const memberships = list(root, 'memberships').map((m, i) => {
    const at = `memberships[${i}]`;
    const membership = { workspace_id: str(m, 'workspace_id', at), user_id: str(m, 'user_id', at), role: oneOf(m, 'role', at, ['admin', 'editor', 'viewer'] as const) };
    ref(wsIds, membership.workspace_id, `${at}.workspace_id`, 'workspace');
    ref(userIds, membership.user_id, `${at}.user_id`, 'user');
    return membership;
  });

  const projects = list(root, 'projects').map((p, i) => {
    const at = `projects[${i}]`;
    const urls = p.knowledge_urls;
    if (urls !== undefined && (!Array.isArray(urls) || urls.some((u) => typeof u !== 'string'))) {
      throw new BundleError(`${at}.knowledge_urls`, 'must be an array of strings');
    }
    const project = {
      id: str(p, 'id', at), workspace_id: str(p, 'workspace_id', at), name: str(p, 'name', at), display_name: str(p, 'display_name', at),
      project_status: str(p, 'project_status', at), ...(urls !== undefined ? { knowledge_urls: urls as string[] } : {}),
      created_at: str(p, 'created_at', at), created_by: str(p, 'created_by', at), updated_at: str(p, 'updated_at', at), updated_by: str(p, 'updated_by', at),
    };
    ref(wsIds, project.workspace_id, `${at}.workspace_id`, 'workspace');
    return project;
  });
  const projectIds = unique(projects.map((p) => p.id), 'projects');

  const artifacts: ArtifactVersion[] = [];
  const identities: Identity[] = [];
  const images: Bundle['profile_images'] = [];
  const versions = new Set<string>();
  const latest = new Map<string, number>();
  const kindOf = new Map<string, string>();
  list(root, 'artifacts').forEach((a, i) => {
    const at = `artifacts[${i}]`;
    for (const key of ARTIFACT_STRINGS) str(a, key, at);
    const kind = oneOf(a, 'kind', at, ARTIFACT_KINDS) as ArtifactKind;
    const ordinal = a.version_ordinal;
    if (!Number.isSafeInteger(ordinal) || (ordinal as number) < 1) throw new BundleError(`${at}.version_ordinal`, 'must be an integer >= 1');
    if (typeof a.is_latest !== 'boolean') throw new BundleError(`${at}.is_latest`, 'must be a boolean');
    const id = a.id as string;
    const versionKey = `${id}@${String(ordinal)}`;
    if (versions.has(versionKey)) throw new BundleError(`${at}.version_ordinal`, `duplicate version ${versionKey}`);
    versions.add(versionKey);
    if (kindOf.has(id) && kindOf.get(id) !== kind) throw new BundleError(`${at}.kind`, `versions of ${id} differ in kind`);
    kindOf.set(id, kind);
    if (a.is_latest) {
      if (latest.has(id)) throw new BundleError(`${at}.is_latest`, `artifact ${id} has more than one latest version`);
      latest.set(id, ordinal as number);
    }
    ref(wsIds, a.workspace_id as string, `${at}.workspace_id`, 'workspace');
    const projectId = optStr(a, 'project_id', at);
    ref(projectIds, projectId, `${at}.project_id`, 'project');
    const displayName = optStr(a, 'display_name', at);
    const serverId = optStr(a, 'server_id', at);
    const doc: Obj = {};
    for (const [k, v] of Object.entries(a)) if (!COMPUTED.includes(k)) doc[k] = v;
    artifacts.push({
      id, version_ordinal: ordinal as number, is_latest: a.is_latest, kind, name: a.name as string,
      ...(displayName !== undefined ? { display_name: displayName } : {}),
      workspace_id: a.workspace_id as string, ...(projectId !== undefined ? { project_id: projectId } : {}),
      artifact_status: a.artifact_status as string, created_at: a.created_at as string, created_by: a.created_by as string,
      updated_at: a.updated_at as string, updated_by: a.updated_by as string,
      ...(serverId !== undefined ? { server_id: serverId } : {}), doc,
    });
    if (a.identity !== undefined && a.is_latest) {
      if (kind !== 'agent') throw new BundleError(`${at}.identity`, 'only agents have identities');
      identities.push(parseIdentity(a.identity, id, `${at}.identity`));
    }
    const image = optStr(a, 'profile_image_base64', at);
    if (image !== undefined && a.is_latest) {
      const bytes = new Uint8Array(Buffer.from(image, 'base64'));
      if (bytes.length === 0) throw new BundleError(`${at}.profile_image_base64`, 'must be non-empty base64');
      images.push({ agent_id: id, content_type: sniffImageType(bytes), bytes });
    }
  });
  for (const id of kindOf.keys()) {
    if (!latest.has(id)) throw new BundleError('artifacts', `artifact ${id} has no latest version`);
  }
  unique(identities.map((i) => i.client_id), 'identities.client_id');

  const relationships = list(root, 'relationships').map((r, i) => {
    const at = `relationships[${i}]`;
    const from = obj(r.from, `${at}.from`);
    const to = obj(r.to, `${at}.to`);
    const rel: Bundle['relationships'][number] = {
      from: { id: str(from, 'id', `${at}.from`), kind: str(from, 'kind', `${at}.from`) },
      to: { id: str(to, 'id', `${at}.to`), kind: str(to, 'kind', `${at}.to`) },
      rel_type: oneOf(r, 'rel_type', at, ['uses_tool', 'uses_skill', 'depends_on', 'derived_from', 'references'] as const),
      provenance: oneOf(r, 'provenance', at, ['declared', 'inferred', 'observed'] as const),
      relationship_status: oneOf(r, 'relationship_status', at, ['active', 'removed'] as const),
    };
    for (const key of ['label', 'role'] as const) {
      const v = optStr(r, key, at);
      if (v !== undefined) rel[key] = v;
    }
    for (const key of ['weight', 'confidence'] as const) {
      if (r[key] === undefined) continue;
      if (typeof r[key] !== 'number' || !Number.isFinite(r[key])) throw new BundleError(`${at}.${key}`, 'must be a number');
      rel[key] = r[key];
    }
    if (r.attributes !== undefined) rel.attributes = obj(r.attributes, `${at}.attributes`);
    ref(new Set(kindOf.keys()), rel.from.id, `${at}.from.id`, 'artifact');
    ref(new Set(kindOf.keys()), rel.to.id, `${at}.to.id`, 'artifact');
    return rel;
  });

  return { organizations, users, workspaces, memberships, projects, artifacts, identities, relationships, profile_images: images };
}
