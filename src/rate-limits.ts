/**
 * Per-caller rate limits of the operations DESIGN §7 limits (3 and 6 by default), counted per
 * operation, not per transport: the REST route and the GraphQL field that run an operation spend
 * the same quota (DESIGN §12). A fixed one-minute window per caller and operation; one limit for
 * all (RATE_LIMIT_PER_MIN) unless an operation has its own.
 */
import { callerKey, type Caller } from './auth/caller.ts';
import { ApiError } from './errors.ts';
import type { RateLimiter } from './store/rate-limit-port.ts';

/**
 * Operations with a per-caller limit: 6 (`tools.list`), 3 (`tools.aggregate`), the MCP Registry
 * API's reads and publishes (anonymous reads count per client address instead, {@link RateLimits.spendByAddress}),
 * and creating webhook subscriptions (each resolves a host name).
 */
export type LimitedOperation =
  'tools.list' | 'tools.aggregate' | 'mcp_registry.read' | 'mcp_registry.publish' | 'webhooks.create';

const WINDOW_MS = 60_000;

/** What one counted call leaves of the caller's quota. */
export interface Quota {
  limit: number;
  remaining: number;
  windowS: number;
  /** Seconds until the window resets (at least 1). */
  resetS: number;
  exceeded: boolean;
}

export class RateLimits {
  private readonly limiter: RateLimiter;
  private readonly perMinute: number;
  private readonly own: Partial<Record<LimitedOperation, number>>;

  /** `perMinute` for every operation, but those `own` gives a limit of their own. */
  constructor(limiter: RateLimiter, perMinute: number, own: Partial<Record<LimitedOperation, number>> = {}) {
    this.limiter = limiter;
    this.perMinute = perMinute;
    this.own = own;
  }

  /**
   * Counts `calls` calls (default one) of `operation` by `caller`; the quota says whether it is over
   * the limit. A GraphQL field doing the work of several REST calls spends as many.
   */
  async spend(caller: Caller, operation: LimitedOperation, calls = 1): Promise<Quota> {
    return this.count(`${callerKey(caller)}|${operation}`, calls, this.own[operation] ?? this.perMinute);
  }

  /** As {@link spend}, for a request without credentials: counted per client address, with the same limit. */
  async spendByAddress(address: string, operation: LimitedOperation): Promise<Quota> {
    return this.count(`ip:${address}|${operation}`, 1, this.own[operation] ?? this.perMinute);
  }

  private async count(key: string, calls: number, limit: number): Promise<Quota> {
    const { count, resetMs } = await this.limiter.hit(key, WINDOW_MS, calls);
    return {
      limit,
      remaining: Math.max(0, limit - count),
      windowS: WINDOW_MS / 1000,
      resetS: Math.max(1, Math.ceil(resetMs / 1000)),
      exceeded: count > limit,
    };
  }
}

/** 429 rate_limited for a call over its quota, with the seconds to wait. */
export function rateLimitedError(quota: Quota): ApiError {
  return new ApiError('rate_limited', `more than ${quota.limit} requests a minute; retry in ${quota.resetS} s`, {
    retryAfter: quota.resetS,
  });
}
