/**
 * Per-caller rate limits (DESIGN §7): operations 3 and 6 by default, any route that sets
 * `config.rateLimited`. A fixed one-minute window per caller and route; over the limit the answer
 * is 429 rate_limited with `Retry-After`, and every limited response carries the IETF
 * `RateLimit-Policy` and `RateLimit` fields. The counter store is a port, so several replicas can
 * share one (server mode); the in-process one serves a single replica.
 */
import type { FastifyInstance } from 'fastify';
import { callerKey } from '../auth/caller.ts';
import { ApiError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Count this route against the caller's per-minute limit. */
    rateLimited?: boolean;
  }
}

export interface RateLimitHit {
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface RateLimiter {
  /** Counts one request for `key` in the current window of `windowMs`. */
  hit(key: string, windowMs: number): Promise<RateLimitHit>;
  close?(): Promise<void>;
}

/** Counters in this process's memory; windows are dropped once they end. */
export class InProcessRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    const now = this.now();
    const start = now - (now % windowMs);
    let w = this.windows.get(key);
    if (w === undefined || w.start !== start) {
      if (this.windows.size > 100_000) for (const [k, v] of this.windows) if (v.start !== start) this.windows.delete(k);
      w = { start, count: 0 };
      this.windows.set(key, w);
    }
    w.count++;
    return { count: w.count, resetMs: start + windowMs - now };
  }
}

const WINDOW_MS = 60_000;

export function installRateLimit(api: FastifyInstance, limiter: RateLimiter, perMinute: number): void {
  api.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.rateLimited !== true) return;
    const { count, resetMs } = await limiter.hit(`${callerKey(request.ctx.caller)}|${request.routeOptions.url}`, WINDOW_MS);
    const reset = Math.max(1, Math.ceil(resetMs / 1000));
    reply.header('ratelimit-policy', `"per-caller";q=${perMinute};w=${WINDOW_MS / 1000}`);
    reply.header('ratelimit', `"per-caller";r=${Math.max(0, perMinute - count)};t=${reset}`);
    if (count > perMinute) {
      throw new ApiError('rate_limited', `more than ${perMinute} requests a minute; retry in ${reset} s`, { retryAfter: reset });
    }
  });
}
