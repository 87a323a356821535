/**
 * Waiting for a service started as its own process (`node src/main.ts`) to answer GET /readyz.
 * Start-up on a busy 2-core machine (CI beside other work) can take tens of seconds: the wait is a
 * deadline for a crash or a hang, never a measure of speed.
 */
export const READY_TIMEOUT_MS = 120_000;

/** Resolves true once `origin` answers /readyz with 200, false after `timeoutMs`. */
export async function waitUntilReady(origin: string, timeoutMs = READY_TIMEOUT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fetch(`${origin}/readyz`).then((r) => r.status === 200, () => false)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
