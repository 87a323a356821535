/**
 * The Redis rate limiter against a real Redis (127.0.0.1:6379, or REDIS_URL_TEST): two limiter
 * instances (two replicas) share one count; windows reset; several calls counted at once; an
 * unreachable Redis lets requests by.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { InProcessRateLimiter } from '../../src/store/memory/rate-limiter.ts';
import { RedisRateLimiter } from '../../src/store/redis/rate-limiter.ts';
import { REDIS_URL, redisReachable } from '../helpers/redis-server.ts';

const URL = REDIS_URL;
const up = await redisReachable('Redis rate-limit tests');

describe.skipIf(!up)('RedisRateLimiter', () => {
  const limiters: RedisRateLimiter[] = [];
  afterAll(async () => {
    for (const l of limiters) await l.close();
  });
  const make = (now: () => number) => {
    const l = new RedisRateLimiter(URL, now);
    limiters.push(l);
    return l;
  };

  it('counts across two replicas in one window, and starts over in the next', async () => {
    let clock = Date.UTC(2030, 0, 1, 0, 0, 5) + Math.floor(Math.random() * 1e6) * 60_000;
    const a = make(() => clock);
    const b = make(() => clock);
    const key = `test-${Math.random()}`;
    const counts = [];
    for (let i = 0; i < 3; i++) {
      counts.push((await a.hit(key, 60_000)).count);
      counts.push((await b.hit(key, 60_000)).count);
    }
    expect(counts).toEqual([1, 2, 3, 4, 5, 6]);
    const hit = await a.hit(key, 60_000);
    expect(hit.resetMs).toBe(55_000);
    clock += 60_000;
    expect((await b.hit(key, 60_000)).count).toBe(1);
  });

  it('counts several calls at once (a GraphQL field doing the work of several), on both counter stores', async () => {
    const key = `test-${Math.random()}`;
    const clock = () => Date.UTC(2030, 0, 1, 0, 0, 5);
    const shared = make(clock);
    expect((await shared.hit(key, 60_000, 30)).count).toBe(30);
    expect((await make(clock).hit(key, 60_000)).count).toBe(31);
    const local = new InProcessRateLimiter(clock);
    expect((await local.hit(key, 60_000, 30)).count).toBe(30);
    expect((await local.hit(key, 60_000)).count).toBe(31);
  });

  it('lets requests through when Redis cannot answer', async () => {
    const dead = new RedisRateLimiter('redis://127.0.0.1:1', () => 0);
    limiters.push(dead);
    expect((await dead.hit('x', 60_000)).count).toBe(0);
  });
});
