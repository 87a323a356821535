/**
 * Another app over the stores of a TestApp, as a second replica would be, built with options
 * startTestApp does not take (a shared persisted-query cache, a logger, a wrapped registry).
 * Tokens minted by the TestApp's dev issuer are valid for it.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../../src/app.ts';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { TestApp } from '../helpers/test-app.ts';

export interface Replica {
  app: FastifyInstance;
  close(): Promise<void>;
}

/** The store as the replica's app sees it: every method of the TestApp's store, but close() leaves it open. */
function borrowed<T extends { close(): Promise<void> }>(store: T): T {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'close') return async () => undefined;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export async function startReplica(
  t: TestApp,
  options: Pick<AppOptions, 'apqCache' | 'logger' | 'rateLimiter'> & {
    wrapRegistry?: (store: RegistryStore) => RegistryStore;
  } = {},
): Promise<Replica> {
  const authenticator = await createAuthenticator(t.config, t.registry);
  const registry = borrowed(options.wrapRegistry ? options.wrapRegistry(t.registry) : t.registry);
  const app = await buildApp({
    services: { config: t.config, registry, traces: borrowed(t.traces) },
    authenticator,
    logger: options.logger ?? false,
    ...(options.apqCache !== undefined ? { apqCache: options.apqCache } : {}),
    ...(options.rateLimiter !== undefined ? { rateLimiter: options.rateLimiter } : {}),
  });
  await app.ready();
  return {
    app,
    async close() {
      await app.close(); // closes its authenticator; the borrowed stores stay open for the TestApp
    },
  };
}
