/**
 * One read shared by concurrent callers, never older than any of them: a caller starts a read, or
 * joins the one queued to start after the read under way; it never takes a read already under way,
 * whose answer may predate the call. So each caller gets a value read (started) after its call,
 * exactly as if it had read alone, and at most one read runs at a time: callers arriving during a
 * read share the next one, however many they are.
 *
 * Used for the registry generation on PostgreSQL, a round trip every request makes (the response
 * cache and the access cache are keyed by it): ten concurrent requests cost two reads, not ten.
 */
export function freshRead<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  let queued: Promise<T> | null = null;
  const start = (): Promise<T> => {
    const p = read();
    running = p;
    const settled = () => {
      if (running === p) running = null;
    };
    p.then(settled, settled);
    return p;
  };
  return () => {
    if (running === null) return start();
    queued ??= running
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        queued = null;
        return start();
      });
    return queued;
  };
}
