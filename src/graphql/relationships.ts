/**
 * The relationships of an artifact as the caller may see them: both ends readable (as REST's
 * presentArtifacts), loaded for a whole query level in two batches (edges, then other ends), and
 * computed once per artifact and request however many fields ask (relationships, usedTools, …).
 * One batch per level computes every artifact's relationships of that level.
 */
import DataLoader from 'dataloader';
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion, Relationship } from '../domain/types.ts';
import { loadedAccess } from './authorize.ts';

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

/** Per request: the relationships of a query level, batched; and those already computed, answered synchronously. */
interface LevelLoader {
  loader: DataLoader<string, RelationshipsParent>;
  /** The artifact each id was first asked for (itself one of its relationships' ends). */
  rows: Map<string, ArtifactVersion>;
  done: Map<string, RelationshipsParent>;
}

const byRequest = new WeakMap<RequestContext, LevelLoader>();

/**
 * The relationships of every artifact asked for in one tick: their edges in one loader batch, the
 * caller's access, then every other end through the artifact loader in one batch; each
 * artifact's readable ones computed from those (an end that failed to load is not readable).
 */
function levelLoader(ctx: RequestContext): LevelLoader {
  let level = byRequest.get(ctx);
  if (level !== undefined) return level;
  const rows = new Map<string, ArtifactVersion>();
  const done = new Map<string, RelationshipsParent>();
  const loader = new DataLoader<string, RelationshipsParent>(async (ids) => {
    const [edges, access] = await Promise.all([ctx.loaders.relationships.loadMany(ids), loadedAccess(ctx)]);
    const others = new Set<string>();
    for (const [i, rels] of edges.entries()) {
      if (rels instanceof Error) continue;
      for (const rel of rels) {
        if (rel.from.id !== ids[i]) others.add(rel.from.id);
        if (rel.to.id !== ids[i]) others.add(rel.to.id);
      }
    }
    const readable = new Map<string, ArtifactVersion>();
    for (const end of await ctx.loaders.artifact.loadMany([...others])) {
      if (end !== null && !(end instanceof Error) && access.canRead(end.workspace_id)) readable.set(end.id, end);
    }
    return ids.map((id, i) => {
      const rels = edges[i] as Relationship[] | Error;
      if (rels instanceof Error) return rels;
      const found = readableOf(rows.get(id) as ArtifactVersion, rels, readable);
      done.set(id, found);
      return found;
    });
  });
  level = { loader, rows, done };
  byRequest.set(ctx, level);
  return level;
}

/** The relationships of `row` whose other end is readable (in `readable`). */
function readableOf(
  row: ArtifactVersion,
  rels: readonly Relationship[],
  readable: ReadonlyMap<string, ArtifactVersion>,
): RelationshipsParent {
  const end = (id: string) => (id === row.id ? row : readable.get(id));
  const out: RelationshipsParent = { count: 0, incoming: [], outgoing: [] };
  for (const rel of rels) {
    const fromRow = end(rel.from.id);
    const toRow = end(rel.to.id);
    if (fromRow === undefined || toRow === undefined) continue;
    if (rel.from.id === row.id) out.outgoing.push({ ...rel, direction: 'outgoing', fromRow, toRow });
    if (rel.to.id === row.id && rel.from.id !== row.id)
      out.incoming.push({ ...rel, direction: 'incoming', fromRow, toRow });
  }
  out.count = out.incoming.length + out.outgoing.length;
  return out;
}

/**
 * Incoming and outgoing relationships of `row` whose both ends the caller can read: computed once
 * per artifact id and request (the first row asked for is the artifact's own end), synchronously
 * once computed.
 */
export function relationshipsOf(
  ctx: RequestContext,
  row: ArtifactVersion,
): RelationshipsParent | Promise<RelationshipsParent> {
  const level = levelLoader(ctx);
  const found = level.done.get(row.id);
  if (found !== undefined) return found;
  if (!level.rows.has(row.id)) level.rows.set(row.id, row);
  return level.loader.load(row.id);
}

/** The readable artifacts at the other end of active relationships of one type and direction. */
export function relatedArtifacts(
  ctx: RequestContext,
  row: ArtifactVersion,
  relType: string,
  direction: 'incoming' | 'outgoing',
  kind: string,
): ArtifactVersion[] | Promise<ArtifactVersion[]> {
  const found = relationshipsOf(ctx, row);
  const pick = (rels: RelationshipsParent) => {
    const out = new Map<string, ArtifactVersion>();
    for (const rel of rels[direction]) {
      const other = direction === 'outgoing' ? rel.toRow : rel.fromRow;
      if (rel.rel_type === relType && rel.relationship_status === 'active' && other.kind === kind)
        out.set(other.id, other);
    }
    return [...out.values()];
  };
  return found instanceof Promise ? found.then(pick) : pick(found);
}
