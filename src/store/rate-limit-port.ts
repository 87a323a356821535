/**
 * The counter store behind per-caller rate limits (DESIGN §7): fixed windows, one counter per key
 * and window. In-process for one replica (store/memory), Redis when replicas share the limit.
 */
export interface RateLimitHit {
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface RateLimiter {
  /** Counts `count` requests (default one) for `key` in the current window of `windowMs`. */
  hit(key: string, windowMs: number, count?: number): Promise<RateLimitHit>;
  close?(): Promise<void>;
}
