/**
 * Validation of an import bundle (DESIGN §11). `parseBundle` either returns a Bundle every engine
 * can write as is, or throws a BundleError naming the first offending JSON path: a bundle that
 * breaks a rule is rejected whole. First the shape (bundle/schema.ts, on Ajv), then what needs more
 * than one record: a bundle is self-contained, so every reference (organization, parent workspace,
 * membership, project, repository, artifact workspace/project/repository, relationship endpoint) must
 * name an object of the same bundle (an artifact's project and repository, one of its organization);
 * ids are unique; the workspaces form a tree. API keys given in clear are hashed here and never kept.
 */
import { Ajv, type ErrorObject } from 'ajv';
import {
  type ArtifactKind,
  type ArtifactVersion,
  type Bundle,
  type Enrichment,
  type Identity,
  type Membership,
  type Organization,
  type Project,
  type Relationship,
  type Repo,
  type User,
} from '../domain/types.ts';
import { hashApiKey } from '../shared/api-key.ts';
import { compact } from '../shared/compact.ts';
import { ARTIFACT_OPTIONAL, bundleSchema, type RawBundle } from './schema.ts';

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
type RawArtifact = NonNullable<RawBundle['artifacts']>[number];
type RawIdentity = NonNullable<RawArtifact['identity']>;

/** RFC 3339 date-time (the form every timestamp of the API takes). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const ajv = new Ajv({ allErrors: false, verbose: true, allowUnionTypes: true });
ajv.addFormat('timestamp', (v: string) => TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v)));
const validateShape = ajv.compile<RawBundle>(bundleSchema);

/** Messages of the rules a bare keyword would describe poorly, by the field they guard. */
const FIELD_RULES: Record<string, string> = {
  content_hash_hex: 'must be 64 hex digits (sha256)',
  api_key: 'must be at least 16 characters without dots or spaces',
  version_ordinal: 'must be an integer >= 1',
};

interface SchemaNode {
  type?: string | string[];
  format?: string;
  enum?: readonly string[];
  properties?: Record<string, SchemaNode>;
}

/** What a value of `schema` must be, as the messages say it. */
function expected(schema: SchemaNode | undefined): string {
  if (schema?.enum !== undefined) return `one of ${schema.enum.join(', ')}`;
  if (schema?.format === 'timestamp') return 'an RFC 3339 timestamp';
  const type = [schema?.type ?? []].flat().find((t) => t !== 'null');
  const names: Record<string, string> = {
    string: 'a non-empty string',
    boolean: 'a boolean',
    integer: 'an integer',
    number: 'a finite number',
    object: 'an object',
    array: 'an array',
  };
  return names[type ?? ''] ?? 'a JSON value';
}

/** The first schema violation as a BundleError: `/artifacts/3/kind` is reported as `artifacts[3].kind`. */
function shapeError(e: ErrorObject): BundleError {
  const parts = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const parent = e.parentSchema as SchemaNode | undefined;
  let schema = parent;
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    parts.push(missing);
    schema = parent?.properties?.[missing];
  }
  const path = parts.reduce((at, p) => (/^\d+$/.test(p) ? `${at}[${p}]` : at === '' ? p : `${at}.${p}`), '') || '$';
  const field = parts.at(-1) ?? '';
  const rule = ['pattern', 'minLength', 'minimum'].includes(e.keyword) ? FIELD_RULES[field] : undefined;
  return new BundleError(path, rule ?? `must be ${expected(schema)}`);
}

/** Null (allowed for optional fields) reads as absent. */
const opt = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

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

function parseUsers(raw: RawBundle, orgIds: Set<string>): User[] {
  const users = (raw.users ?? []).map((u, i): User => {
    ref(orgIds, u.org_id, `users[${i}].org_id`, 'organization');
    return compact({
      id: u.id,
      org_id: u.org_id,
      name: opt(u.name),
      email: opt(u.email),
      status: u.status ?? 'active',
      created_at: u.created_at,
      updated_at: u.updated_at,
      enrichment: opt(u.enrichment) as Enrichment | undefined,
    });
  });
  uniqueIds(users, 'users');
  return users;
}

function parseWorkspaces(raw: RawBundle, orgIds: Set<string>): Bundle['workspaces'] {
  const workspaces = (raw.workspaces ?? []).map((w) =>
    compact({
      id: w.id,
      org_id: w.org_id,
      name: w.name,
      display_name: w.display_name,
      kind: w.kind,
      workspace_status: w.workspace_status,
      parent_id: opt(w.parent_id),
      created_at: w.created_at,
      created_by: w.created_by,
      updated_at: w.updated_at,
      updated_by: w.updated_by,
    }),
  );
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

function parseMemberships(raw: RawBundle, orgOfUser: Map<string, string>, orgOfWorkspace: Map<string, string>) {
  const pairs = new Set<string>();
  return (raw.memberships ?? []).map((m, i): Membership => {
    const at = `memberships[${i}]`;
    ref(orgOfWorkspace, m.workspace_id, `${at}.workspace_id`, 'workspace');
    ref(orgOfUser, m.user_id, `${at}.user_id`, 'user');
    if (orgOfUser.get(m.user_id) !== orgOfWorkspace.get(m.workspace_id)) {
      throw new BundleError(`${at}.user_id`, 'user belongs to another organization than the workspace');
    }
    const pair = JSON.stringify([m.workspace_id, m.user_id]);
    if (pairs.has(pair)) throw new BundleError(at, `duplicate membership of ${m.user_id} in ${m.workspace_id}`);
    pairs.add(pair);
    return { workspace_id: m.workspace_id, user_id: m.user_id, role: m.role };
  });
}

function parseProjects(raw: RawBundle, orgOfWorkspace: Map<string, string>): Project[] {
  const projects = (raw.projects ?? []).map((p, i): Project => {
    ref(orgOfWorkspace, p.workspace_id, `projects[${i}].workspace_id`, 'workspace');
    return compact({
      id: p.id,
      workspace_id: p.workspace_id,
      name: p.name,
      display_name: p.display_name,
      project_status: p.project_status,
      knowledge_urls: opt(p.knowledge_urls),
      created_at: p.created_at,
      created_by: p.created_by,
      updated_at: p.updated_at,
      updated_by: p.updated_by,
    });
  });
  uniqueIds(projects, 'projects');
  return projects;
}

function parseRepos(raw: RawBundle, orgOfWorkspace: Map<string, string>): Repo[] {
  const repos = (raw.repos ?? []).map((r, i): Repo => {
    ref(orgOfWorkspace, r.workspace_id, `repos[${i}].workspace_id`, 'workspace');
    return compact({
      id: r.id,
      workspace_id: r.workspace_id,
      name: r.name,
      display_name: r.display_name,
      source_uri: r.source_uri,
      default_branch: opt(r.default_branch),
      created_at: r.created_at,
      created_by: r.created_by,
      updated_at: r.updated_at,
      updated_by: r.updated_by,
    });
  });
  uniqueIds(repos, 'repos');
  return repos;
}

interface ArtifactContext {
  orgOfWorkspace: Map<string, string>;
  projects: Map<string, Project>;
  repos: Map<string, Repo>;
}

/** An artifact's project or repository: absent, or an object of the bundle in the artifact's organization. */
function containerRef(
  ctx: ArtifactContext,
  containers: Map<string, { workspace_id: string }>,
  id: string | undefined,
  workspaceId: string,
  at: string,
  what: string,
): void {
  ref(containers, id, at, what);
  if (id === undefined) return;
  const org = ctx.orgOfWorkspace.get(containers.get(id)?.workspace_id ?? '');
  if (org !== ctx.orgOfWorkspace.get(workspaceId)) throw new BundleError(at, `${what} belongs to another organization`);
}

/**
 * Fields the API computes (per caller, per request, or from other records: `repo`): never kept in
 * an artifact's `doc`.
 */
const COMPUTED = new Set(['identity', 'permissions', 'relationships', 'profile_image_base64', 'repo']);
/** Optional fields whose null means absent (any other field keeps its null in `doc`). */
const NULL_IS_ABSENT = new Set(Object.keys(ARTIFACT_OPTIONAL).filter((k) => k !== 'source_metadata'));

function toVersion(a: RawArtifact, at: string, ctx: ArtifactContext): ArtifactVersion {
  ref(ctx.orgOfWorkspace, a.workspace_id, `${at}.workspace_id`, 'workspace');
  const projectId = opt(a.project_id);
  containerRef(ctx, ctx.projects, projectId, a.workspace_id, `${at}.project_id`, 'project');
  const repoId = opt(a.repo_id);
  containerRef(ctx, ctx.repos, repoId, a.workspace_id, `${at}.repo_id`, 'repository');
  const doc: Obj = {};
  for (const [k, v] of Object.entries(a)) {
    // `__proto__` (an own member of parsed JSON) would set the document's prototype, whose fields
    // no schema checked: dropped, like the computed fields.
    if (COMPUTED.has(k) || k === '__proto__' || (v === null && NULL_IS_ABSENT.has(k))) continue;
    doc[k] = v;
  }
  return compact({
    id: a.id,
    version_ordinal: a.version_ordinal,
    is_latest: a.is_latest,
    kind: a.kind,
    name: a.name,
    display_name: opt(a.display_name),
    workspace_id: a.workspace_id,
    project_id: projectId,
    repo_id: repoId,
    artifact_status: a.artifact_status,
    created_at: a.created_at,
    created_by: a.created_by,
    updated_at: a.updated_at,
    updated_by: a.updated_by,
    server_id: a.kind === 'tool' ? opt(a.server_id) : undefined,
    doc,
  });
}

function parseIdentity(o: RawIdentity, agentId: string, at: string): Identity {
  const key = opt(o.api_key);
  if (o.credential_kind === 'api_key' && key === undefined)
    throw new BundleError(`${at}.api_key`, 'is required when credential_kind is api_key');
  if (o.credential_kind !== 'api_key' && key !== undefined)
    throw new BundleError(`${at}.api_key`, 'is only allowed when credential_kind is api_key');
  return compact({
    agent_id: agentId,
    client_id: o.client_id,
    credential_kind: o.credential_kind,
    api_key_hash: key === undefined ? undefined : hashApiKey(key),
    api_key_last4: key?.slice(-4),
    expires_at: opt(o.expires_at),
    revoked: o.revoked === true ? true : undefined,
  });
}

interface ParsedArtifacts {
  artifacts: ArtifactVersion[];
  identities: Identity[];
  images: Bundle['profile_images'];
  /** Kind of every artifact id. */
  kinds: Map<string, ArtifactKind>;
}

function parseArtifacts(raw: RawBundle, ctx: ArtifactContext): ParsedArtifacts {
  const out: ParsedArtifacts = { artifacts: [], identities: [], images: [], kinds: new Map() };
  const versions = new Set<string>();
  const latest = new Set<string>();
  const clientIds = new Set<string>();
  const keyHashes = new Set<string>();
  (raw.artifacts ?? []).forEach((a, i) => {
    const at = `artifacts[${i}]`;
    const { id, kind } = a;
    const versionKey = `${id}@${a.version_ordinal}`;
    if (versions.has(versionKey)) throw new BundleError(`${at}.version_ordinal`, `duplicate version ${versionKey}`);
    versions.add(versionKey);
    if ((out.kinds.get(id) ?? kind) !== kind) throw new BundleError(`${at}.kind`, `versions of ${id} differ in kind`);
    out.kinds.set(id, kind);
    if (a.is_latest) {
      if (latest.has(id)) throw new BundleError(`${at}.is_latest`, `artifact ${id} has more than one latest version`);
      latest.add(id);
    }
    out.artifacts.push(toVersion(a, at, ctx));

    if (a.identity !== undefined && a.identity !== null) {
      if (kind !== 'agent') throw new BundleError(`${at}.identity`, 'only agents have identities');
      const identity = parseIdentity(a.identity, id, `${at}.identity`);
      if (a.is_latest) {
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
    const image = opt(a.profile_image_base64);
    if (image !== undefined) {
      if (kind !== 'agent') throw new BundleError(`${at}.profile_image_base64`, 'only agents have profile images');
      const bytes = new Uint8Array(Buffer.from(image, 'base64'));
      const type = /^[A-Za-z0-9+/]+={0,2}$/.test(image) ? sniffImageType(bytes) : null;
      if (type === null)
        throw new BundleError(`${at}.profile_image_base64`, 'must be a base64 PNG, JPEG, GIF or WebP image');
      if (a.is_latest) out.images.push({ agent_id: id, content_type: type, bytes });
    }
  });
  for (const id of out.kinds.keys()) {
    if (!latest.has(id)) throw new BundleError('artifacts', `artifact ${id} has no latest version`);
  }
  return out;
}

function parseRelationships(raw: RawBundle, kinds: Map<string, ArtifactKind>): Relationship[] {
  const seen = new Set<string>();
  return (raw.relationships ?? []).map((r, i) => {
    const at = `relationships[${i}]`;
    const end = (key: 'from' | 'to') => {
      const { id, kind } = r[key];
      ref(kinds, id, `${at}.${key}.id`, 'artifact');
      const actual = kinds.get(id);
      if (actual !== kind) throw new BundleError(`${at}.${key}.kind`, `artifact ${id} is a ${actual}, not a ${kind}`);
      return { id, kind: actual };
    };
    const rel: Relationship = compact({
      from: end('from'),
      to: end('to'),
      rel_type: r.rel_type,
      provenance: r.provenance,
      relationship_status: r.relationship_status,
      label: opt(r.label),
      role: opt(r.role),
      weight: opt(r.weight),
      confidence: opt(r.confidence),
      attributes: opt(r.attributes),
    });
    const key = JSON.stringify([rel.from.id, rel.to.id, rel.rel_type]);
    if (seen.has(key)) throw new BundleError(at, `duplicate relationship ${rel.from.id} ${rel.rel_type} ${rel.to.id}`);
    seen.add(key);
    return rel;
  });
}

/** Validates a raw bundle (API field names, DESIGN §11) and returns it in the stores' shape. */
export function parseBundle(input: unknown): Bundle {
  if (!validateShape(input)) {
    const [first] = validateShape.errors ?? [];
    throw first === undefined ? new BundleError('$', 'must be a bundle object') : shapeError(first);
  }
  const raw = input;
  const organizations: Organization[] = (raw.organizations ?? []).map((o) => ({
    id: o.id,
    name: o.name,
    status: o.status,
  }));
  const orgIds = uniqueIds(organizations, 'organizations');
  const users = parseUsers(raw, orgIds);
  const workspaces = parseWorkspaces(raw, orgIds);
  const orgOfWorkspace = new Map(workspaces.map((w) => [w.id, w.org_id]));
  const memberships = parseMemberships(raw, new Map(users.map((u) => [u.id, u.org_id])), orgOfWorkspace);
  const projects = parseProjects(raw, orgOfWorkspace);
  const repos = parseRepos(raw, orgOfWorkspace);
  const parsed = parseArtifacts(raw, {
    orgOfWorkspace,
    projects: new Map(projects.map((p) => [p.id, p])),
    repos: new Map(repos.map((r) => [r.id, r])),
  });
  const relationships = parseRelationships(raw, parsed.kinds);
  return {
    organizations,
    users,
    workspaces,
    memberships,
    projects,
    repos,
    artifacts: parsed.artifacts,
    identities: parsed.identities,
    relationships,
    profile_images: parsed.images,
  };
}
