/**
 * `GET /.well-known/ai-catalog.json`: an AI Catalog (Agent-Card/ai-card, specification/ai-catalog.md
 * at commit 634a09d98b644153384cde4f1cb4cbb70ead0e04, `specVersion` 1.0) of what the caller may
 * read: one entry per readable agent, pointing to its A2A Agent Card. Conformance level 2
 * (Discoverable Catalog): `host` names the caller's organization.
 *
 * Bounded: at most {@link AI_CATALOG_MAX_ENTRIES} entries over all sources, each source in its own
 * order (agents by name, then id); when the caller may read more, `metadata.truncated` is true and
 * `metadata.totalEntries` says how many there are.
 */
import type { RequestContext } from '../context.ts';
import type { ArtifactVersion } from '../domain/types.ts';
import { agentCardUrl, documentDescription, documentTags, versionOf } from './agent-card.ts';

const AI_CATALOG_SPEC_VERSION = '1.0';
export const AI_CATALOG_MEDIA_TYPE = 'application/ai-catalog+json';
/** The entry media type the AI Catalog specification names for an A2A Agent Card. */
export const A2A_AGENT_CARD_MEDIA_TYPE = 'application/a2a-agent-card+json';
export const AI_CATALOG_MAX_ENTRIES = 1000;

/** A Catalog Entry that references its artifact by `url` (the specification's other form, `data`, is not used). */
interface CatalogEntry {
  identifier: string;
  displayName: string;
  mediaType: string;
  url: string;
  version?: string;
  description?: string;
  tags?: string[];
  updatedAt?: string;
}

export interface AiCatalog {
  specVersion: string;
  host: { displayName: string; identifier: string };
  entries: CatalogEntry[];
  metadata?: { truncated: true; totalEntries: number };
}

/**
 * Entries of one kind of artifact the caller can read, at most `limit`, and how many the caller can
 * read in all.
 */
type EntrySource = (
  ctx: RequestContext,
  base: string,
  limit: number,
) => Promise<{ entries: CatalogEntry[]; total: number }>;

/** `urn:agent-registry:<organization>:<kind>:<id>`: stable wherever the catalog is served from. */
function catalogIdentifier(orgId: string, kind: string, id: string): string {
  return `urn:agent-registry:${encodeURIComponent(orgId)}:${kind}:${encodeURIComponent(id)}`;
}

function agentEntry(orgId: string, base: string, row: ArtifactVersion): CatalogEntry {
  const description = documentDescription(row.doc);
  const tags = documentTags(row.doc);
  return {
    identifier: catalogIdentifier(orgId, 'agent', row.id),
    displayName: row.display_name ?? row.name,
    mediaType: A2A_AGENT_CARD_MEDIA_TYPE,
    url: agentCardUrl(base, row.id),
    version: versionOf(row),
    ...(description !== undefined ? { description } : {}),
    ...(tags !== undefined ? { tags } : {}),
    updatedAt: row.updated_at,
  };
}

const agentEntries: EntrySource = async (ctx, base, limit) => {
  const access = await ctx.access();
  const page = await ctx.registry.findArtifacts({
    kind: 'agent',
    workspaceIds: access.readableWorkspaceIds,
    sorts: [{ field: 'name', desc: false }],
    limit,
    offset: 0,
  });
  return { entries: page.items.map((row) => agentEntry(ctx.caller.orgId, base, row)), total: page.total };
};

/**
 * The sources of the catalog, in order; each fills what the bound leaves of the entries.
 *
 * EXTENSION POINT: MCP servers. An MCP server source (the readable workspaces' latest server
 * versions, each an entry whose `url` is its MCP Registry document and whose `mediaType` names that
 * document's format) is appended here; nothing else changes.
 */
const SOURCES: readonly EntrySource[] = [agentEntries];

export async function getAiCatalog(ctx: RequestContext): Promise<AiCatalog> {
  const base = ctx.baseUrl();
  const [org] = await ctx.registry.getOrganizations([ctx.caller.orgId]);
  const entries: CatalogEntry[] = [];
  let total = 0;
  for (const source of SOURCES) {
    const found = await source(ctx, base, AI_CATALOG_MAX_ENTRIES - entries.length);
    entries.push(...found.entries);
    total += found.total;
    ctx.checkDeadline();
  }
  return {
    specVersion: AI_CATALOG_SPEC_VERSION,
    host: { displayName: org?.name ?? ctx.caller.orgId, identifier: base },
    entries,
    ...(total > entries.length ? { metadata: { truncated: true as const, totalEntries: total } } : {}),
  };
}
