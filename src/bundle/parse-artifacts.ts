/**
 * The artifacts of an import bundle: each version's workspace, project and repository checked, its
 * document kept without the fields the API computes, one latest version per artifact, and the
 * identities (API keys hashed) and profile images of the latest agent versions.
 */
import type { ArtifactKind, ArtifactVersion, Bundle, Identity, Project, Repo } from '../domain/types.ts';
import { hashApiKey } from '../shared/api-key.ts';
import { compact } from '../shared/compact.ts';
import { BundleError, opt, ref } from './checks.ts';
import { ARTIFACT_OPTIONAL, type RawBundle } from './schema.ts';

type Obj = Record<string, unknown>;
type RawArtifact = NonNullable<RawBundle['artifacts']>[number];
type RawIdentity = NonNullable<RawArtifact['identity']>;

function sniffImageType(b: Uint8Array): string | null {
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'image/png';
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46) return 'image/gif';
  if (b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57 && b[9] === 0x45) return 'image/webp';
  return null;
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

export function parseArtifacts(raw: RawBundle, ctx: ArtifactContext): ParsedArtifacts {
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
