/**
 * The store behind the response caches (REST and GraphQL): answers kept per key together with the
 * registry generation they were computed at, and reused only while that generation is current.
 * Bounded twice: at most `maxEntries` answers, and at most `maxBytes` of answers in all (each at
 * most 1 MiB); the least recently used answer goes first.
 */

/** Sizes of a response cache; either at 0 turns it off. */
export interface AnswerCacheBounds {
  maxEntries: number;
  maxBytes: number;
}

interface Entry<V> {
  generation: string;
  bytes: number;
  value: V;
}

const MAX_ANSWER_BYTES = 1 << 20;

/** True when the bounds leave room for any answer at all. */
export function answerCacheEnabled(bounds: AnswerCacheBounds): boolean {
  return bounds.maxEntries > 0 && bounds.maxBytes > 0;
}

export class AnswerCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private bytes = 0;
  private readonly bounds: AnswerCacheBounds;

  constructor(bounds: AnswerCacheBounds) {
    this.bounds = bounds;
  }

  /** The answer kept under `key` at `generation`, now the most recently used; none when stale or absent. */
  get(key: string, generation: string): V | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined || hit.generation !== generation) return undefined;
    // Refresh recency: Map iteration order is insertion order.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.value;
  }

  /** The answer kept under `key` at whatever generation, its recency unchanged (to learn how to check it). */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Keeps `value` (`bytes` long) under `key`, dropping the least recently used answers to make room. */
  set(key: string, generation: string, value: V, bytes: number): void {
    if (bytes > MAX_ANSWER_BYTES || bytes > this.bounds.maxBytes) return;
    this.drop(key);
    while (this.entries.size >= this.bounds.maxEntries || this.bytes + bytes > this.bounds.maxBytes)
      this.drop(this.entries.keys().next().value as string);
    this.bytes += bytes;
    this.entries.set(key, { generation, bytes, value });
  }

  private drop(key: string): void {
    this.bytes -= this.entries.get(key)?.bytes ?? 0;
    this.entries.delete(key);
  }
}
