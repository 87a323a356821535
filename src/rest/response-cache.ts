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
import { AnswerCache, answerCacheEnabled, type AnswerCacheBounds } from '../shared/answer-cache.ts';

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
  contentType: string;
  /** The Vary header of the uncached answer, replayed on hits so shared caches keep representations apart. */
  vary?: string;
  /** Encoded once when cached: a hit sends the bytes as they are. */
  payload: Buffer;
}

/** Bounded as `AnswerCache` is: entries, bytes of bodies (each at most 1 MiB), least recently used first. */
export function installResponseCache(api: FastifyInstance, bounds: AnswerCacheBounds): void {
  if (!answerCacheEnabled(bounds)) return;
  const entries = new AnswerCache<Entry>(bounds);
  api.decorateRequest('cacheSlot', null);

  api.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const cacheable = request.routeOptions.config.responseCache;
    if (cacheable !== true && (typeof cacheable !== 'function' || !cacheable(request))) return;
    const body = request.body === undefined ? '' : JSON.stringify(request.body);
    const key = `${callerKey(request.ctx.caller)}\n${request.method} ${request.url}\n${request.headers.accept ?? ''}\n${body}`;
    const generation = await request.ctx.generation();
    const hit = entries.get(key, generation);
    if (hit !== undefined) {
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
    entries.set(
      slot.key,
      slot.generation,
      {
        contentType: String(reply.getHeader('content-type')),
        // The headers a route sets about its representation; per-request ones (rate limits) are not replayed.
        ...(reply.hasHeader('vary') ? { vary: String(reply.getHeader('vary')) } : {}),
        payload: body,
      },
      body.length,
    );
    return payload;
  });
}
