/**
 * The relationships of an artifact as the caller may see them: both ends readable (as REST's
 * presentArtifacts), loaded for a whole query level in two batches (edges, then other ends).
 */
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import type { RelationshipParent, RelationshipsParent } from './parents.ts';

/** Incoming and outgoing relationships of `row` whose both ends the caller can read. */
export async function relationshipsOf(ctx: RequestContext, row: ArtifactVersion): Promise<RelationshipsParent> {
  const [rels, access] = await Promise.all([ctx.loaders.relationships.load(row.id), ctx.access()]);
  const others = [...new Set(rels.flatMap((r) => [r.from.id, r.to.id]).filter((id) => id !== row.id))];
  const ends = await ctx.loaders.artifact.loadMany(others);
  const readable = new Set([row.id]);
  for (const end of ends) if (end !== null && !(end instanceof Error) && access.canRead(end.workspace_id)) readable.add(end.id);

  const out: RelationshipsParent = { count: 0, incoming: [], outgoing: [] };
  for (const rel of rels) {
    if (!readable.has(rel.from.id) || !readable.has(rel.to.id)) continue;
    if (rel.from.id === row.id) out.outgoing.push({ ...rel, direction: 'outgoing' });
    if (rel.to.id === row.id && rel.from.id !== row.id) out.incoming.push({ ...rel, direction: 'incoming' });
  }
  out.count = out.incoming.length + out.outgoing.length;
  return out;
}

/** The readable artifacts at the other end of active relationships of one type and direction. */
export async function relatedArtifacts(
  ctx: RequestContext,
  row: ArtifactVersion,
  relType: string,
  direction: 'incoming' | 'outgoing',
  kind: string,
): Promise<ArtifactVersion[]> {
  const rels = (await relationshipsOf(ctx, row))[direction].filter(
    (r: RelationshipParent) => r.rel_type === relType && r.relationship_status === 'active',
  );
  const ids = [...new Set(rels.map((r) => (direction === 'outgoing' ? r.to.id : r.from.id)))];
  const rows = await ctx.loaders.artifact.loadMany(ids);
  return rows.filter((a): a is ArtifactVersion => a !== null && !(a instanceof Error) && a.kind === kind);
}
