/**
 * Rate-limit counters shared by every replica through Redis (server mode): one key per counter
 * and window, incremented by an amount and given its expiry atomically (MULTI: INCRBY + PEXPIRE).
 * When Redis cannot answer, requests are let through rather than refused: the limit protects the
 * service, an outage of the counter store must not take the API down with it.
 */
import { Redis } from 'ioredis';
import type { RateLimitHit, RateLimiter } from '../rate-limit-port.ts';

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly now: () => number;

  constructor(url: string, now: () => number = Date.now) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 1000, commandTimeout: 500 });
    // Connection errors surface per call; the client reconnects by itself.
    this.redis.on('error', () => undefined);
    this.now = now;
  }

  async hit(key: string, windowMs: number, amount = 1): Promise<RateLimitHit> {
    const now = this.now();
    const start = now - (now % windowMs);
    const resetMs = start + windowMs - now;
    try {
      const redisKey = `gw:rl:${key}:${start}`;
      const replies = await this.redis
        .multi()
        .incrby(redisKey, amount)
        .pexpire(redisKey, windowMs + 1000)
        .exec();
      const count = Number(replies?.[0]?.[1] ?? 0);
      return { count, resetMs, windowStart: start };
    } catch {
      return { count: 0, resetMs, windowStart: start };
    }
  }

  /** The key names its window; its expiry stays where the hit put it (the window's end + 1 s). */
  async refund(key: string, windowMs: number, windowStart: number, amount: number): Promise<void> {
    const leftMs = windowStart + windowMs - this.now();
    if (leftMs <= 0) return;
    const redisKey = `gw:rl:${key}:${windowStart}`;
    try {
      await this.redis
        .multi()
        .decrby(redisKey, amount)
        .pexpire(redisKey, leftMs + 1000)
        .exec();
    } catch {
      // A lost refund counts a refused request against the caller until the window ends.
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
