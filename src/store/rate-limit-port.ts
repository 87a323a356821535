/**
 * The counter store behind per-caller rate limits (DESIGN §7) and ingestion quotas: fixed windows,
 * one counter per key and window, counting requests (an amount of 1) or amounts (records, bytes).
 * In-process for one replica (store/memory), Redis when replicas share the limit.
 */
export interface RateLimitHit {
  /** The window's count, this hit included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
  /** Start of the window counted (epoch ms): a refund names it, so it never lands in a later window. */
  windowStart: number;
}

export interface RateLimiter {
  /** Counts `amount` (default 1) for `key` in the current window of `windowMs`, atomically. */
  hit(key: string, windowMs: number, amount?: number): Promise<RateLimitHit>;
  /**
   * Takes back `amount` that `hit` counted in the window starting at `windowStart` (a request that
   * was then refused); a window that has ended is left alone.
   */
  refund(key: string, windowMs: number, windowStart: number, amount: number): Promise<void>;
  close?(): Promise<void>;
}
