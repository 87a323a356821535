/**
 * The in-process rate-limit counters (store/memory/rate-limiter.ts): amounts, refunds into the window
 * counted only, and the sweep that keeps the map bounded dropping only windows that have ended, so a
 * day's count survives the turn of a one-second window (both share the map). The Redis engine's
 * cases: test/server/redis-rate-limit.test.ts and test/server/redis-ingest-quotas.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { InProcessRateLimiter } from '../../src/store/memory/rate-limiter.ts';

const NOON = Date.UTC(2030, 0, 1, 12, 0, 0, 250);

describe('InProcessRateLimiter', () => {
  it('counts amounts, one by default, and refunds only into the window counted', async () => {
    let clock = NOON;
    const limiter = new InProcessRateLimiter(() => clock);
    expect(await limiter.hit('m', 60_000)).toEqual({ count: 1, resetMs: 59_750, windowStart: NOON - 250 });
    const first = await limiter.hit('k', 1000, 700);
    expect(first).toEqual({ count: 700, resetMs: 750, windowStart: NOON - 250 });
    expect((await limiter.hit('k', 1000, 400)).count).toBe(1100);
    await limiter.refund('k', 1000, first.windowStart, 400);
    expect((await limiter.hit('k', 1000, 0)).count).toBe(700);
    clock += 1000;
    expect((await limiter.hit('k', 1000, 5)).count).toBe(5);
    await limiter.refund('k', 1000, first.windowStart, 700);
    expect((await limiter.hit('k', 1000, 0)).count).toBe(5);
  });

  it("sweeps ended windows only: a day's count outlives a crowd of one-second windows", async () => {
    let clock = NOON;
    const limiter = new InProcessRateLimiter(() => clock);
    await limiter.hit('day', 86_400_000, 5);
    for (let i = 0; i <= 100_000; i++) await limiter.hit(`second-${i}`, 1000);
    clock += 1000;
    // This window is new: the map is over its bound and is swept before it is added.
    expect((await limiter.hit('second-new', 1000)).count).toBe(1);
    expect((await limiter.hit('day', 86_400_000, 0)).count).toBe(5);
    expect((await limiter.hit('second-0', 1000, 0)).count).toBe(0);
  });
});
