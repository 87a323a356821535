/**
 * The embedded trace store's watermark ({@link TraceStore.watermark}): a count of the writes that
 * have settled in this process. It moves once a write has settled, committed or not, so an answer
 * read before the move is kept under the old mark and one read after it under the new: a cached
 * answer is never keyed to a mark it is older than. One process holds the embedded store, so a
 * process-local count sees every write.
 */
export class SettledWrites {
  private writes = 0;

  /** `write`, counted once it settles. */
  after<T>(write: Promise<T>): Promise<T> {
    return write.finally(() => {
      this.writes++;
    });
  }

  get mark(): string {
    return `w${this.writes}`;
  }
}
