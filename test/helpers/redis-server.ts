/**
 * The Redis of the server-mode tests (REDIS_URL_TEST, default the local service) and whether it
 * answers. When it does not, the suites are skipped with a visible notice, except under
 * REQUIRE_SERVER_TESTS=1 (CI), where that is a failure, as pg-schema.ts does for PostgreSQL.
 */
import net from 'node:net';

export const REDIS_URL = process.env.REDIS_URL_TEST ?? 'redis://127.0.0.1:6379';

/** True when Redis accepts a connection; `what` names the skipped suite in the notice. */
export async function redisReachable(what: string): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  const up = await new Promise<boolean>((resolve) => {
    const socket = net.connect(Number(port || 6379), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
  if (!up && process.env.REQUIRE_SERVER_TESTS === '1')
    throw new Error(`Redis at ${REDIS_URL} is unreachable and CI requires the server-mode tests`);
  if (!up)
    console.warn(`NOTICE: Redis at ${REDIS_URL} is unreachable; ${what} are skipped (.ci/run always provides one)`);
  return up;
}
