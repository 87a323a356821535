/**
 * The relationships of an artifact as the caller may see them: both ends readable (as REST's
 * presentArtifacts), loaded for a whole query level in two batches (edges, then other ends), and
 * computed once per artifact and request however many fields ask (relationships, usedTools, …).
 */
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion, Relationship } from '../domain/types.ts';

/** A relationship as seen from the artifact that carries it, both ends loaded and readable. */
export type RelationshipParent = Relationship & {
  direction: 'incoming' | 'outgoing';
  fromRow: ArtifactVersion;
  toRow: ArtifactVersion;
};

/** The relationships of one artifact whose other end the caller can read. */
export interface RelationshipsParent {
  count: number;
  incoming: RelationshipParent[];
  outgoing: RelationshipParent[];
}

const byRequest = new WeakMap<RequestContext, Map<string, Promise<RelationshipsParent>>>();

async function load(ctx: RequestContext, row: ArtifactVersion): Promise<RelationshipsParent> {
  const [rels, access] = await Promise.all([ctx.loaders.relationships.load(row.id), ctx.access()]);
  const others = [...new Set(rels.flatMap((r) => [r.from.id, r.to.id]).filter((id) => id !== row.id))];
  const readable = new Map<string, ArtifactVersion>([[row.id, row]]);
  for (const end of await ctx.loaders.artifact.loadMany(others)) {
    if (end !== null && !(end instanceof Error) && access.canRead(end.workspace_id)) readable.set(end.id, end);
  }
  const out: RelationshipsParent = { count: 0, incoming: [], outgoing: [] };
  for (const rel of rels) {
    const fromRow = readable.get(rel.from.id);
    const toRow = readable.get(rel.to.id);
    if (fromRow === undefined || toRow === undefined) continue;
    if (rel.from.id === row.id) out.outgoing.push({ ...rel, direction: 'outgoing', fromRow, toRow });
    if (rel.to.id === row.id && rel.from.id !== row.id)
      out.incoming.push({ ...rel, direction: 'incoming', fromRow, toRow });
  }
  out.count = out.incoming.length + out.outgoing.length;
  return out;
}

/** Incoming and outgoing relationships of `row` whose both ends the caller can read. */
export function relationshipsOf(ctx: RequestContext, row: ArtifactVersion): Promise<RelationshipsParent> {
  let memo = byRequest.get(ctx);
  if (memo === undefined) {
    memo = new Map();
    byRequest.set(ctx, memo);
  }
  let found = memo.get(row.id);
  if (found === undefined) {
    found = load(ctx, row);
    memo.set(row.id, found);
  }
  return found;
}

/** The readable artifacts at the other end of active relationships of one type and direction. */
export async function relatedArtifacts(
  ctx: RequestContext,
  row: ArtifactVersion,
  relType: string,
  direction: 'incoming' | 'outgoing',
  kind: string,
): Promise<ArtifactVersion[]> {
  const out = new Map<string, ArtifactVersion>();
  for (const rel of (await relationshipsOf(ctx, row))[direction]) {
    const other = direction === 'outgoing' ? rel.toRow : rel.fromRow;
    if (rel.rel_type === relType && rel.relationship_status === 'active' && other.kind === kind)
      out.set(other.id, other);
  }
  return [...out.values()];
}
