/**
 * A Redis key-value cache with Apollo's KeyValueCache shape, so automatic persisted queries
 * registered through one replica are found by every other. Errors read as misses (the client then
 * sends the full query again), never as failed requests.
 */
import { Redis } from 'ioredis';

export class RedisKeyValueCache {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(url: string, prefix = 'gw:apq:') {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 1000, commandTimeout: 500 });
    this.redis.on('error', () => undefined);
    this.prefix = prefix;
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return (await this.redis.get(this.prefix + key)) ?? undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, value: string, options?: { ttl?: number | null }): Promise<void> {
    try {
      // No ttl (or null, "no expiry") still expires after a day: the cache stays bounded.
      const ttl = options?.ttl ?? 86_400;
      if (ttl <= 0) await this.redis.set(this.prefix + key, value);
      else await this.redis.set(this.prefix + key, value, 'EX', Math.ceil(ttl));
    } catch {
      // A lost registration only costs one more round trip with the full query.
    }
  }

  async delete(key: string): Promise<boolean> {
    try {
      return (await this.redis.del(this.prefix + key)) > 0;
    } catch {
      return false;
    }
  }

  close(): void {
    this.redis.disconnect();
  }
}
