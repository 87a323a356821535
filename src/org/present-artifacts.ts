/**
 * Turns stored artifact versions into API resources for one caller: stored fields, plus the
 * computed ones (permissions, relationships limited to readable endpoints, masked identity).
 * Every lookup is batched over the whole page.
 */
import type { Access } from '../auth/access.ts';
import type { ArtifactVersion, Identity, Relationship } from '../domain/types.ts';
import type { RawBundle } from '../store/bundle-schema.ts';
import type { ReadyArtifact, RegistryStore } from '../store/registry-port.ts';

/** An agent's credential as the API shows it: `api_key` masked to its last four characters. */
export interface MaskedIdentity {
  client_id: string;
  credential_kind: Identity['credential_kind'];
  api_key?: string;
  expires_at?: string;
}

/** A relationship seen from one of its artifacts. */
type RelationshipView = Omit<Relationship, 'attributes'> & {
  direction: 'incoming' | 'outgoing';
  attributes?: Record<string, unknown>;
};

interface ArtifactRelationships {
  count: number;
  incoming: RelationshipView[];
  outgoing: RelationshipView[];
}

/**
 * The stored document of an artifact version: the specification's fields as the bundle schema
 * admitted them at import (bundle-schema.ts), without the fields computed per caller.
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

/** `api_key` never leaves the service: a fixed prefix plus its last four characters. */
export function maskIdentity(identity: Identity): MaskedIdentity {
  const out: MaskedIdentity = { client_id: identity.client_id, credential_kind: identity.credential_kind };
  if (identity.api_key_last4 !== undefined) out.api_key = `****${identity.api_key_last4}`;
  if (identity.expires_at !== undefined) out.expires_at = identity.expires_at;
  return out;
}

function relationshipView(rel: Relationship, direction: 'incoming' | 'outgoing'): RelationshipView {
  const view: RelationshipView = {
    direction,
    provenance: rel.provenance,
    rel_type: rel.rel_type,
    relationship_status: rel.relationship_status,
    from: rel.from,
    to: rel.to,
  };
  if (rel.attributes !== undefined) view.attributes = rel.attributes;
  if (rel.confidence !== undefined) view.confidence = rel.confidence;
  if (rel.label !== undefined) view.label = rel.label;
  if (rel.role !== undefined) view.role = rel.role;
  if (rel.weight !== undefined) view.weight = rel.weight;
  return view;
}

export interface ArtifactExtras {
  relationships: Map<string, ArtifactRelationships>;
  identities: Map<string, Identity>;
}

/** Relationships (other endpoint readable by the caller) and identities of these artifacts. */
export async function loadArtifactExtras(
  store: RegistryStore,
  access: Access,
  rows: readonly Pick<ArtifactVersion, 'id' | 'kind'>[],
): Promise<ArtifactExtras> {
  const ids = rows.map((r) => r.id);
  const agentIds = rows.filter((r) => r.kind === 'agent').map((r) => r.id);
  const [{ relationships: rels, otherEndWorkspaces }, identities] = await Promise.all([
    ids.length > 0
      ? store.getRelationshipsWithEnds(ids)
      : Promise.resolve({ relationships: [], otherEndWorkspaces: new Map<string, string>() }),
    agentIds.length > 0 ? store.getIdentitiesOfAgents(agentIds) : Promise.resolve([]),
  ]);
  const readable = new Set(ids);
  for (const [id, ws] of otherEndWorkspaces) if (access.canRead(ws)) readable.add(id);

  const relationships: ArtifactExtras['relationships'] = new Map(
    ids.map((id) => [id, { count: 0, incoming: [], outgoing: [] }]),
  );
  for (const rel of rels) {
    if (!readable.has(rel.from.id) || !readable.has(rel.to.id)) continue;
    const out = relationships.get(rel.from.id);
    if (out) {
      out.outgoing.push(relationshipView(rel, 'outgoing'));
      out.count++;
    }
    const inc = relationships.get(rel.to.id);
    if (inc && rel.to.id !== rel.from.id) {
      inc.incoming.push(relationshipView(rel, 'incoming'));
      inc.count++;
    }
  }
  return { relationships, identities: new Map(identities.map((i) => [i.agent_id, i])) };
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
 * document (shared/api-document.ts) with the per-caller fields appended. The same members as
 * `presentArtifact` serialized by the kind's response schema; only their order differs.
 */
function presentArtifactJson(row: ReadyArtifact, access: Access, extras: ArtifactExtras): string {
  // The form is an object with at least the required fields: its closing brace gives way to them.
  let out = `${row.api_json.slice(0, -1)},"permissions":${JSON.stringify(access.artifactPermissions(row))}`;
  const identity = extras.identities.get(row.id);
  if (identity !== undefined) out += `,"identity":${JSON.stringify(maskIdentity(identity))}`;
  const rel = extras.relationships.get(row.id);
  if (rel !== undefined) out += `,"relationships":${JSON.stringify(rel)}`;
  return `${out}}`;
}

/** An artifact as JSON text (`presentArtifactJson`): a page is answered by joining them. */
export type ArtifactJson = string;

/** The rows presented to this caller as JSON text, every lookup batched over the page. */
export async function presentArtifactsJson(
  store: RegistryStore,
  access: Access,
  rows: ReadyArtifact[],
): Promise<ArtifactJson[]> {
  if (rows.length === 0) return [];
  const extras = await loadArtifactExtras(store, access, rows);
  return rows.map((row) => presentArtifactJson(row, access, extras));
}
