/**
 * One read shared by concurrent callers, never older than any of them: a caller starts a read, or
 * joins the one queued to start after the read under way; it never takes a read already under way,
 * whose answer may predate the call. So each caller gets a value read (started) after its call,
 * exactly as if it had read alone, and while reads answer promptly at most one runs at a time:
 * callers arriving during a read share the next one, however many they are.
 *
 * Sharing is bounded in time: a read under way for `shareForMs` or longer is no longer waited for
 * (a connection that died silently may never answer). A caller then starts a read of its own, and
 * the callers already queued start theirs when that time is up, as they would without sharing.
 *
 * Used for the registry generation on PostgreSQL, a round trip every request makes (the response
 * cache and the access cache are keyed by it): ten concurrent requests cost two reads, not ten.
 */
export function freshRead<T>(read: () => Promise<T>, shareForMs = 1000): () => Promise<T> {
  let running: { read: Promise<T>; since: number } | null = null;
  let queued: Promise<T> | null = null;
  const start = (): Promise<T> => {
    const mine = { read: read(), since: Date.now() };
    running = mine;
    const settled = () => {
      if (running === mine) running = null;
    };
    mine.read.then(settled, settled);
    return mine.read;
  };
  return () => {
    const under = running;
    if (under === null || Date.now() - under.since >= shareForMs) return start();
    queued ??= new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, under.since + shareForMs - Date.now());
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      under.read.then(done, done);
    }).then(() => {
      queued = null;
      return start();
    });
    return queued;
  };
}
