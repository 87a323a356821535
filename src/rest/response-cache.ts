/**
 * Per-caller cache of successful read responses. A response is reused only while the registry's
 * `generation()` is unchanged (any write, by any process, invalidates everything) and only for
 * the same caller, route, query string, body and Accept header, so authorization and content
 * negotiation are exactly those of the first answer. Routes opt in with `config.responseCache`.
 * Answers that read the trace store (trace metrics of operation 3) are not cached: ingestion does
 * not change the registry's generation.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerKey } from '../auth/caller.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Cache successful responses of this route per caller (read-only routes only); a function
     * decides per request (an answer that depends on more than the registry is not cached).
     */
    responseCache?: boolean | ((request: FastifyRequest) => boolean);
  }
  interface FastifyRequest {
    cacheSlot: { key: string; generation: string } | null;
  }
}

interface Entry {
  generation: string;
  contentType: string;
  /** The Vary header of the uncached answer, replayed on hits so shared caches keep representations apart. */
  vary?: string;
  /** Encoded once when cached: a hit sends the bytes as they are. */
  payload: Buffer;
}

const MAX_PAYLOAD_BYTES = 1 << 20;

/**
 * Bounded twice: at most `maxEntries` answers, and at most `maxBytes` of bodies in all (each at
 * most 1 MiB); the least recently used answer goes first.
 */
export function installResponseCache(api: FastifyInstance, bounds: { maxEntries: number; maxBytes: number }): void {
  if (bounds.maxEntries === 0 || bounds.maxBytes === 0) return;
  const entries = new Map<string, Entry>();
  let bytes = 0;
  const drop = (key: string) => {
    bytes -= entries.get(key)?.payload.length ?? 0;
    entries.delete(key);
  };
  api.decorateRequest('cacheSlot', null);

  api.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const cacheable = request.routeOptions.config.responseCache;
    if (cacheable !== true && (typeof cacheable !== 'function' || !cacheable(request))) return;
    const body = request.body === undefined ? '' : JSON.stringify(request.body);
    const key = `${callerKey(request.ctx.caller)}\n${request.method} ${request.url}\n${request.headers.accept ?? ''}\n${body}`;
    const generation = await request.ctx.generation();
    const hit = entries.get(key);
    if (hit !== undefined && hit.generation === generation) {
      // Refresh recency: Map iteration order is insertion order.
      entries.delete(key);
      entries.set(key, hit);
      if (hit.vary !== undefined) reply.header('vary', hit.vary);
      return reply.header('x-cache', 'hit').type(hit.contentType).send(hit.payload);
    }
    request.cacheSlot = { key, generation };
  });

  api.addHook('onSend', async (request, reply, payload) => {
    const slot = request.cacheSlot;
    if (slot === null || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    if (body.length > MAX_PAYLOAD_BYTES || body.length > bounds.maxBytes) return payload;
    drop(slot.key);
    while (entries.size >= bounds.maxEntries || bytes + body.length > bounds.maxBytes)
      drop(entries.keys().next().value as string);
    bytes += body.length;
    entries.set(slot.key, {
      generation: slot.generation,
      contentType: String(reply.getHeader('content-type')),
      // The headers a route sets about its representation; per-request ones (rate limits) are not replayed.
      ...(reply.hasHeader('vary') ? { vary: String(reply.getHeader('vary')) } : {}),
      payload: body,
    });
    return payload;
  });
}
