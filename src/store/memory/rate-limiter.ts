/** Rate-limit counters in this process's memory (one replica); windows are dropped once they end. */
import type { RateLimitHit, RateLimiter } from '../rate-limit-port.ts';

/** Keys kept before ended windows are swept: the map stays bounded however many callers come. */
const SWEEP_AT = 100_000;

export class InProcessRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { start: number; end: number; count: number }>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  async hit(key: string, windowMs: number, amount = 1): Promise<RateLimitHit> {
    const now = this.now();
    const start = now - (now % windowMs);
    let w = this.windows.get(key);
    if (w === undefined || w.start !== start) {
      // Windows of different lengths share the map: only those that have ended go (a day's count
      // must not be swept by a one-second window's turn).
      if (this.windows.size > SWEEP_AT) for (const [k, v] of this.windows) if (v.end <= now) this.windows.delete(k);
      w = { start, end: start + windowMs, count: 0 };
      this.windows.set(key, w);
    }
    w.count += amount;
    return { count: w.count, resetMs: start + windowMs - now, windowStart: start };
  }

  async refund(key: string, _windowMs: number, windowStart: number, amount: number): Promise<void> {
    const w = this.windows.get(key);
    if (w?.start === windowStart) w.count -= amount;
  }
}
