/**
 * An artifact's `relationships` member as the API shows it (count, incoming, outgoing), built
 * from the relationships of a set of artifacts and a rule saying which other ends a reader may
 * see; and its ready form, which the stores keep beside each latest artifact so that a REST page
 * need not load and shape relationships per request. The form also holds an agent's masked
 * identity, which every reader sees alike.
 *
 * The ready form of artifact X holds every relationship of X whose other end is a known (latest)
 * artifact, or X itself, and the workspaces of those other ends. A reader whose readable
 * workspaces include all of them sees exactly that form: an other end is shown when it is on the
 * reader's page or its workspace is readable, and a page only holds artifacts of readable
 * workspaces. Any other reader gets the relationships computed for it. The stores write the forms
 * of every artifact an import could change (its artifacts, the ends of its relationships and their
 * neighbours) in the import's transaction, and fill missing ones when they open.
 */
import type { Identity, Relationship } from '../domain/types.ts';
import { maskIdentity } from './masked-identity.ts';

/** A relationship seen from one of its artifacts. */
type RelationshipView = Omit<Relationship, 'attributes'> & {
  direction: 'incoming' | 'outgoing';
  attributes?: Record<string, unknown>;
};

export interface ArtifactRelationships {
  count: number;
  incoming: RelationshipView[];
  outgoing: RelationshipView[];
}

/** What a stored artifact keeps ready of its per-reader members (see the module comment). */
export interface ReadyExtras {
  /** Its `ArtifactRelationships`, every known other end shown, as JSON text. */
  relationships: string;
  /** The workspaces of its relationships' other ends, sorted, each once. */
  endWorkspaces: readonly string[];
  /** An agent's masked identity (`maskIdentity`) as JSON text, when it has one: it is the same for every reader. */
  identity?: string;
}

/**
 * Names the shape of the ready forms: a change to what `relationshipView` writes must change it,
 * so stores drop the forms they kept (it is part of the ready documents' fingerprint).
 */
export const RELATIONSHIP_FORM_VERSION = 2;

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

/**
 * The `relationships` member of each of `ids`, from `rels` (every relationship touching them, in
 * the port's order: from, to, type) keeping those whose two ends pass `visible`.
 */
export function artifactRelationships(
  ids: readonly string[],
  rels: readonly Relationship[],
  visible: (id: string) => boolean,
): Map<string, ArtifactRelationships> {
  const out = new Map<string, ArtifactRelationships>(ids.map((id) => [id, { count: 0, incoming: [], outgoing: [] }]));
  for (const rel of rels) {
    if (!visible(rel.from.id) || !visible(rel.to.id)) continue;
    const from = out.get(rel.from.id);
    if (from) {
      from.outgoing.push(relationshipView(rel, 'outgoing'));
      from.count++;
    }
    const to = out.get(rel.to.id);
    if (to && rel.to.id !== rel.from.id) {
      to.incoming.push(relationshipView(rel, 'incoming'));
      to.count++;
    }
  }
  return out;
}

/**
 * The ready forms of `ids`, from `rels` (every relationship touching them, in the port's order),
 * the workspace of every known artifact among their ends (`workspaceOf`) and their identities.
 */
export function relationshipForms(
  ids: readonly string[],
  rels: readonly Relationship[],
  workspaceOf: ReadonlyMap<string, string>,
  identities: readonly Identity[] = [],
): Map<string, ReadyExtras> {
  const identityOf = new Map(identities.map((i) => [i.agent_id, i]));
  const byId = new Map<string, Relationship[]>(ids.map((id) => [id, []]));
  for (const r of rels) {
    byId.get(r.from.id)?.push(r);
    if (r.to.id !== r.from.id) byId.get(r.to.id)?.push(r);
  }
  const forms = new Map<string, ReadyExtras>();
  for (const [id, own] of byId) {
    const known = (end: string) => end === id || workspaceOf.has(end);
    const [relationships] = artifactRelationships([id], own, known).values();
    const ends = new Set<string>();
    for (const r of own) {
      const other = r.from.id === id ? r.to.id : r.from.id;
      const ws = other === id ? undefined : workspaceOf.get(other);
      if (ws !== undefined) ends.add(ws);
    }
    const form: ReadyExtras = { relationships: JSON.stringify(relationships), endWorkspaces: [...ends].sort() };
    const identity = identityOf.get(id);
    if (identity !== undefined) form.identity = JSON.stringify(maskIdentity(identity));
    forms.set(id, form);
  }
  return forms;
}
