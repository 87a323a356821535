/** Liveness and readiness probes; no authentication. */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../context.ts';

type Check = () => Promise<void>;

async function probe(check: Check, timeoutMs: number): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, Check> = {
      registry: () => services.registry.ping(),
      traces: () => services.traces.ping(),
    };
    const results: Record<string, string> = {};
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        results[name] = await probe(check, 2000);
      }),
    );
    const ready = Object.values(results).every((r) => r === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: results });
  });
}
