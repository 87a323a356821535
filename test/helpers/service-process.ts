/**
 * A service started as its own process (`node src/main.ts`): a port for it, and waiting for it to
 * answer GET /readyz.
 * Start-up on a busy 2-core machine (CI beside other work) can take tens of seconds: the wait is a
 * deadline for a crash or a hang, never a measure of speed.
 */
import net from 'node:net';

export const READY_TIMEOUT_MS = 120_000;

/** A loopback port nothing listens on now (for a service started as a process). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** Resolves true once `origin` answers /readyz with 200, false after `timeoutMs`. */
export async function waitUntilReady(origin: string, timeoutMs = READY_TIMEOUT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await fetch(`${origin}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
