/**
 * Who reads the MCP Registry API, as the handlers see it: the workspaces whose servers the reader
 * sees, and those whose servers it may learn exist without reading them. A caller (bearer token or
 * API key) reads what `Access` lets it read, as everywhere; a request without credentials reads the
 * workspaces an admin published for anonymous reading (MCP_REGISTRY_PUBLIC_WORKSPACES), exactly
 * those (not their sub-workspaces), and learns nothing of any other.
 */
import type { RequestContext } from '../context.ts';
import type { McpServerStore } from '../store/mcp-server-port.ts';
import type { UsageReader } from './usage.ts';

export interface McpReader extends UsageReader {
  readonly registry: McpServerStore;
  /** Throws 504 request_timeout once the request's deadline has passed. */
  checkDeadline(): void;
  /** The workspaces whose servers this reader sees; its usage counts their spans. */
  readable(): Promise<readonly string[]>;
  /** Workspaces whose servers it may learn exist without reading them (403 rather than 404). */
  discoverable(): Promise<readonly string[]>;
}

export function callerReader(ctx: RequestContext): McpReader {
  return {
    registry: ctx.registry,
    traces: ctx.traces,
    signal: ctx.signal,
    checkDeadline: () => ctx.checkDeadline(),
    readable: async () => (await ctx.access()).readableWorkspaceIds,
    discoverable: async () => (await ctx.access()).discoverableWorkspaceIds(),
  };
}

/** A reader without credentials: the published workspaces only. */
export function anonymousReader(
  base: Omit<McpReader, 'readable' | 'discoverable'>,
  publicWorkspaces: readonly string[],
): McpReader {
  const readable = [...publicWorkspaces].sort();
  return { ...base, readable: async () => readable, discoverable: async () => [] };
}
