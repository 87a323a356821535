/**
 * The REST side of per-caller rate limits (shared/rate-limits.ts): a route that names its
 * operation in `config.rateLimited` spends the caller's quota before its body is read, and every
 * limited response carries the IETF `RateLimit-Policy` and `RateLimit` fields; over the limit the
 * answer is 429 rate_limited with `Retry-After`.
 */
import type { FastifyInstance } from 'fastify';
import { rateLimitedError, type LimitedOperation } from '../shared/rate-limits.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation this route runs, counted against the caller's per-minute limit. */
    rateLimited?: LimitedOperation;
  }
}

export function installRateLimit(api: FastifyInstance): void {
  api.addHook('onRequest', async (request, reply) => {
    const operation = request.routeOptions.config.rateLimited;
    if (operation === undefined) return;
    const quota = await request.ctx.spendQuota(operation);
    reply.header('ratelimit-policy', `"per-caller";q=${quota.limit};w=${quota.windowS}`);
    reply.header('ratelimit', `"per-caller";r=${quota.remaining};t=${quota.resetS}`);
    if (quota.exceeded) throw rateLimitedError(quota);
  });
}
