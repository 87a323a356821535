/**
 * Turns stored artifact versions into API resources for one caller: stored fields, plus the
 * computed ones (permissions, relationships limited to readable endpoints, masked identity).
 * Every lookup is batched over the whole page.
 */
import type { Access } from '../auth/access.ts';
import type { ArtifactVersion, Identity, Relationship } from '../domain/types.ts';
import type { RegistryStore } from '../store/registry-port.ts';

export type ApiArtifact = Record<string, unknown>;

/** `api_key` never leaves the service: a fixed prefix plus its last four characters. */
export function maskIdentity(identity: Identity): Record<string, string> {
  const out: Record<string, string> = { client_id: identity.client_id, credential_kind: identity.credential_kind };
  if (identity.api_key_last4 !== undefined) out.api_key = `****${identity.api_key_last4}`;
  if (identity.expires_at !== undefined) out.expires_at = identity.expires_at;
  return out;
}

function relationshipView(rel: Relationship, direction: 'incoming' | 'outgoing'): Record<string, unknown> {
  const view: Record<string, unknown> = {
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
  relationships: Map<string, { count: number; incoming: unknown[]; outgoing: unknown[] }>;
  identities: Map<string, Identity>;
}

/** Relationships (other endpoint readable by the caller) and identities of these artifacts. */
export async function loadArtifactExtras(
  store: RegistryStore,
  access: Access,
  rows: ArtifactVersion[],
): Promise<ArtifactExtras> {
  const ids = rows.map((r) => r.id);
  const agentIds = rows.filter((r) => r.kind === 'agent').map((r) => r.id);
  const [rels, identities] = await Promise.all([
    ids.length > 0 ? store.getRelationships(ids) : Promise.resolve([]),
    agentIds.length > 0 ? store.getIdentitiesOfAgents(agentIds) : Promise.resolve([]),
  ]);
  const own = new Set(ids);
  const others = [...new Set(rels.flatMap((r) => [r.from.id, r.to.id]).filter((id) => !own.has(id)))];
  const otherWs = others.length > 0 ? await store.getArtifactWorkspaceIds(others) : new Map<string, string>();
  const readable = new Set([...ids, ...[...otherWs].filter(([, ws]) => access.canRead(ws)).map(([id]) => id)]);

  const relationships: ArtifactExtras['relationships'] = new Map(
    ids.map((id) => [id, { count: 0, incoming: [] as unknown[], outgoing: [] as unknown[] }]),
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
  const out: ApiArtifact = { ...row.doc };
  const identity = extras.identities.get(row.id);
  if (identity !== undefined) out.identity = maskIdentity(identity);
  else delete out.identity;
  out.permissions = access.artifactPermissions(row);
  const rel = extras.relationships.get(row.id);
  if (rel !== undefined) out.relationships = rel;
  return out;
}

export async function presentArtifacts(
  store: RegistryStore,
  access: Access,
  rows: ArtifactVersion[],
): Promise<ApiArtifact[]> {
  if (rows.length === 0) return [];
  const extras = await loadArtifactExtras(store, access, rows);
  return rows.map((row) => presentArtifact(row, access, extras));
}
