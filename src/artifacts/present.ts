/**
 * Turns stored artifact versions into API resources for one caller: stored fields, plus the
 * computed ones (permissions, relationships limited to readable endpoints, masked identity).
 * Every lookup is batched over the whole page.
 */
import type { Access } from '../auth/access.ts';
import type { ArtifactVersion, Identity } from '../domain/types.ts';
import { maskIdentity, type MaskedIdentity } from '../shared/masked-identity.ts';
import { artifactRelationships, type ArtifactRelationships } from '../shared/relationship-forms.ts';
import type { RawBundle } from '../bundle/schema.ts';
import type { ReadyArtifact, RegistryStore } from '../store/registry-port.ts';

/**
 * The stored document of an artifact version: the specification's fields as the bundle schema
 * admitted them at import (bundle/schema.ts), without the fields computed per caller.
 */
type ArtifactDocument = Omit<
  NonNullable<RawBundle['artifacts']>[number],
  'identity' | 'permissions' | 'relationships' | 'profile_image_base64'
>;

/** One artifact as the API shows it to a caller: its document plus the per-caller fields. */
export type ApiArtifact = ArtifactDocument & {
  permissions: ReturnType<Access['artifactPermissions']>;
  identity?: MaskedIdentity;
  relationships?: ArtifactRelationships;
};

export interface ArtifactExtras {
  relationships: Map<string, ArtifactRelationships>;
  identities: Map<string, Identity>;
}

/**
 * Relationships (other endpoint readable by the caller) and identities of these artifacts; the
 * relationships of those in `shownReady` and the identities of those in `identityReady` (their
 * ready forms answer) are not loaded.
 */
export async function loadArtifactExtras(
  store: RegistryStore,
  access: Access,
  rows: readonly Pick<ArtifactVersion, 'id' | 'kind'>[],
  shownReady: ReadonlySet<string> = new Set(),
  identityReady: ReadonlySet<string> = new Set(),
): Promise<ArtifactExtras> {
  const ids = rows.map((r) => r.id);
  const computed = ids.filter((id) => !shownReady.has(id));
  const agentIds = rows.filter((r) => r.kind === 'agent' && !identityReady.has(r.id)).map((r) => r.id);
  const [{ relationships: rels, otherEndWorkspaces }, identities] = await Promise.all([
    computed.length > 0
      ? store.getRelationshipsWithEnds(computed)
      : Promise.resolve({ relationships: [], otherEndWorkspaces: new Map<string, string>() }),
    agentIds.length > 0 ? store.getIdentitiesOfAgents(agentIds) : Promise.resolve([]),
  ]);
  // Every artifact of the page is readable; an other end is when its workspace is.
  const readable = new Set(ids);
  for (const [id, ws] of otherEndWorkspaces) if (access.canRead(ws)) readable.add(id);
  return {
    relationships: artifactRelationships(computed, rels, (id) => readable.has(id)),
    identities: new Map(identities.map((i) => [i.agent_id, i])),
  };
}

/** One artifact as the API shows it to this caller. */
export function presentArtifact(row: ArtifactVersion, access: Access, extras: ArtifactExtras): ApiArtifact {
  // The document passed the bundle schema when it was imported; the store keeps it as JSON. One
  // copy of it per row: the stored identity (never shown) is dropped from the copy.
  const out = Object.assign({}, row.doc) as ApiArtifact & { identity?: unknown };
  const identity = extras.identities.get(row.id);
  if (identity !== undefined) out.identity = maskIdentity(identity);
  else if ('identity' in out) delete out.identity;
  out.permissions = access.artifactPermissions(row);
  const rel = extras.relationships.get(row.id);
  if (rel !== undefined) out.relationships = rel;
  return out;
}

/**
 * One artifact as the API shows it to this caller, as JSON text: its stored ready-to-send
 * document (shared/api-document.ts) with the per-caller fields appended (`permissions`: the
 * caller's permissions on it, encoded). The same members as
 * `presentArtifact` serialized by the kind's response schema; only their order differs.
 */
function presentArtifactJson(
  row: ReadyArtifact,
  extras: ArtifactExtras,
  permissions: (row: ReadyArtifact) => string,
): string {
  // The form is an object with at least the required fields: its closing brace gives way to them.
  let out = `${row.api_json.slice(0, -1)},"permissions":${permissions(row)}`;
  const identity = extras.identities.get(row.id);
  if (identity !== undefined) out += `,"identity":${JSON.stringify(maskIdentity(identity))}`;
  // Only agents show one (an identity row may outlive its agent's kind, as on the object path).
  else if (row.kind === 'agent' && row.extras?.identity !== undefined) out += `,"identity":${row.extras.identity}`;
  const rel = extras.relationships.get(row.id);
  if (rel !== undefined) out += `,"relationships":${JSON.stringify(rel)}`;
  else if (row.extras !== undefined) out += `,"relationships":${row.extras.relationships}`;
  return `${out}}`;
}

/** An artifact as JSON text (`presentArtifactJson`): a page is answered by joining them. */
export type ArtifactJson = string;

/** Whether the caller sees a row's ready relationships as they are: every other end's workspace is readable. */
function showsReady(row: ReadyArtifact, access: Access): boolean {
  return row.extras !== undefined && row.extras.endWorkspaces.every((ws) => access.canRead(ws));
}

/** The rows presented to this caller as JSON text, every lookup batched over the page. */
export async function presentArtifactsJson(
  store: RegistryStore,
  access: Access,
  rows: ReadyArtifact[],
): Promise<ArtifactJson[]> {
  if (rows.length === 0) return [];
  const shownReady = new Set(rows.filter((row) => showsReady(row, access)).map((row) => row.id));
  const identityReady = new Set(rows.filter((row) => row.extras !== undefined).map((row) => row.id));
  const extras = await loadArtifactExtras(store, access, rows, shownReady, identityReady);
  // Permissions follow the workspace's role and whether the caller created the artifact: one encoding per pair.
  const encoded = new Map<string, string>();
  const permissions = (row: ReadyArtifact) => {
    const key = `${row.workspace_id}\n${row.created_by}`;
    let json = encoded.get(key);
    if (json === undefined) {
      json = JSON.stringify(access.artifactPermissions(row));
      encoded.set(key, json);
    }
    return json;
  };
  return rows.map((row) => presentArtifactJson(row, extras, permissions));
}
