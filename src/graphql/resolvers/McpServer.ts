/**
 * McpServer: the latest version of a published server.json (typed members read from the document
 * as published: a member of another JSON type than the schema's reads as null), its workspace,
 * versions and tools through the request's loaders, and its usage from telemetry.
 */
import type {
  McpServerPackage,
  McpServerRemote,
  McpServerRepository,
  McpServerResolvers,
} from '../../generated/graphql.ts';
import { readableMcpServer, readableWorkspaceOrNull } from '../authorize.ts';
import { serverUsage } from '../server-usage-loader.ts';
import { settledSlice } from '../settle-nodes.ts';

type Doc = Record<string, unknown>;

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const record = (v: unknown): Doc | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Doc) : null;
const records = (v: unknown): Doc[] => (Array.isArray(v) ? v.map(record).filter((r): r is Doc => r !== null) : []);
const json = (v: unknown): unknown => v ?? null;

function repositoryOf(server: Doc): McpServerRepository | null {
  const r = record(server.repository);
  if (r === null) return null;
  return { url: text(r.url), source: text(r.source), subfolder: text(r.subfolder), id: text(r.id) };
}

function packagesOf(server: Doc): McpServerPackage[] {
  return records(server.packages).map((p) => {
    const transport = record(p.transport);
    return {
      registryType: text(p.registryType),
      registryBaseUrl: text(p.registryBaseUrl),
      identifier: text(p.identifier),
      version: text(p.version),
      runtimeHint: text(p.runtimeHint),
      fileSha256: text(p.fileSha256),
      transportType: text(transport?.type),
      transportUrl: text(transport?.url),
      runtimeArguments: json(p.runtimeArguments),
      packageArguments: json(p.packageArguments),
      environmentVariables: json(p.environmentVariables),
    };
  });
}

function remotesOf(server: Doc): McpServerRemote[] {
  return records(server.remotes).map((r) => ({
    type: text(r.type),
    url: text(r.url),
    headers: json(r.headers),
    variables: json(r.variables),
  }));
}

/** Resolvers of `McpServer` (see the file comment). */
export const McpServer: McpServerResolvers = {
  __resolveReference: (ref, ctx) => readableMcpServer(ctx, ref.id),
  title: (s) => text(s.server.title),
  description: (s) => text(s.server.description),
  websiteUrl: (s) => text(s.server.websiteUrl),
  repository: (s) => repositoryOf(s.server),
  packages: (s) => packagesOf(s.server),
  remotes: (s) => remotesOf(s.server),
  workspace: (s, _args, ctx) => readableWorkspaceOrNull(ctx, s.workspace_id),
  versions: (s, _args, ctx) => ctx.loaders.mcpServerVersions.load(s.id),
  tools: async (s, args, ctx, info) =>
    settledSlice(ctx, info, `mcp-tools:${s.id}`, await ctx.loaders.toolsOfServer.load(s.id), args.first, args.after),
  usage: async (s, _args, ctx) => {
    const u = await serverUsage(ctx, s.id);
    return { calls: u.calls, errorRate: u.error_rate, p95LatencyMs: u.p95_latency_ms, windowDays: u.window_days };
  },
};
