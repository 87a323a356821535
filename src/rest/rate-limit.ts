/**
 * The REST side of per-caller rate limits (rate-limits.ts): a route that names its
 * operation in `config.rateLimited` spends the caller's quota before its body is read, and every
 * limited response carries the IETF `RateLimit-Policy` and `RateLimit` fields; over the limit the
 * answer is 429 rate_limited with `Retry-After`. The OTLP routes spend the ingestion quotas
 * (otlp/ingest-quotas.ts) the same way, once their body is decoded.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitedError, type LimitedOperation } from '../rate-limits.ts';
import { ingestQuotaError } from '../otlp/ingest-quotas.ts';

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

/**
 * Spends an OTLP request's records (as decoded) and bytes (its decompressed body) from its caller's
 * and organization's ingestion quotas; the answer carries every quota in force (`RateLimit-Policy`,
 * `RateLimit`: the name says the unit, records or bytes; `w` is 1 or 86400 seconds). Over a quota:
 * 429 with `Retry-After`, before anything of the request is stored.
 */
/**
 * 429 before the body is read when the caller's (or its organization's) quota is spent already:
 * a caller over its quota costs the receiver no reading and no decoding.
 */
export async function refuseSpentIngestQuota(request: FastifyRequest): Promise<void> {
  const spent = await request.ctx.ingestQuotaSpent();
  if (spent !== null) throw ingestQuotaError(spent);
}

export async function spendIngestQuotas(
  request: FastifyRequest,
  reply: FastifyReply,
  records: number,
  bytes: number,
): Promise<void> {
  const { quotas, refused } = await request.ctx.spendIngestQuotas({ records, bytes });
  if (quotas.length > 0) {
    reply.header('ratelimit-policy', quotas.map((q) => `"${q.name}";q=${q.limit};w=${q.windowS}`).join(', '));
    reply.header('ratelimit', quotas.map((q) => `"${q.name}";r=${q.remaining};t=${q.resetS}`).join(', '));
  }
  if (refused !== null) throw ingestQuotaError(refused);
}
