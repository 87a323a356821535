/**
 * The background sealing of both trace engines (duckdb/sealing.ts, postgres/sealing.ts): a step
 * every few seconds, its failures said (statistics stay exact while sealing lags, only slower), at
 * most once a minute so a lasting fault does not flood the log.
 */
const FAILURE_REPEAT_MS = 60_000;

/**
 * Runs `step` every `everyMs` (0: never; the caller seals on demand) until the returned timer is
 * cleared. A failure is passed to `notice` unless `closed()` says the store is shutting down.
 */
export function sealInBackground(
  everyMs: number,
  step: () => Promise<unknown>,
  notice: (message: string) => void,
  closed: () => boolean,
): NodeJS.Timeout | null {
  if (everyMs <= 0) return null;
  let lastFailure = 0;
  const timer = setInterval(() => {
    void step().catch((err: unknown) => {
      if (closed() || Date.now() - lastFailure < FAILURE_REPEAT_MS) return;
      lastFailure = Date.now();
      notice(
        `sealing failed (statistics stay exact but slower until it succeeds): ${err instanceof Error ? err.message : String(err)}`,
      );
    });
  }, everyMs);
  timer.unref();
  return timer;
}
