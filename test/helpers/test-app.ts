/**
 * Starts the real app for a test: a temp DATA_DIR, a real SQLite registry loaded with a bundle
 * (the small fixture by default), the real authenticator, and the dev issuer to mint real JWTs.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import type { OtlpFaults } from '../../src/rest/otlp-routes.ts';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import type { Authenticator } from '../../src/auth/caller.ts';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { openRegistryStore } from '../../src/store/open-registry.ts';
import { openTraceStore } from '../../src/store/open-traces.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import type { RateLimiter } from '../../src/store/rate-limit-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { webhookGuard, type GuardLookups } from '../../src/insights/webhook-guard.ts';
import { compact } from '../../src/shared/compact.ts';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  registry: RegistryStore;
  traces: TraceStore;
  /** The app's authenticator (for transports started beside it, like the gRPC port). */
  authenticator: Authenticator;
  dataDir: string;
  /** A real dev-issuer JWT for this user (org defaults to org-a). */
  token(sub: string, org?: string): Promise<string>;
  /** `{ authorization: 'Bearer …' }` for this user. */
  auth(sub: string, org?: string): Promise<{ authorization: string }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** A DATA_DIR the caller owns, kept on close: an app started again on it is the service restarted. */
  dataDir?: string;
  bundle?: unknown;
  /** Fault injection: wrap the real store (delays, failures) as the app sees it. */
  wrapRegistry?: (store: RegistryStore) => RegistryStore;
  /** The same for the trace store. */
  wrapTraces?: (store: TraceStore) => TraceStore;
  /** Failures the OTLP receiver answers after a commit (exporters' retries). */
  otlpFaults?: OtlpFaults;
  /** Counters of rate limits and ingestion quotas (a clock the test moves, or Redis); in-process otherwise. */
  rateLimiter?: RateLimiter;
  /** The resolver and gate the creation of webhook subscriptions looks host names up with; the system's otherwise. */
  webhookLookups?: GuardLookups;
  /** Where refused webhook targets are logged (what their host resolved to); nowhere otherwise. */
  webhookLog?: { info(obj: object, msg: string): void };
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'gw-test-')));
  // No load shedding unless a test asks: on a busy machine the app's own start-up can hold the
  // event loop past the threshold, and the next request would be shed with 503 service_overloaded.
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    SEED_DEMO: 'false',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    // Tests send spans of any date (2023, the edges of years); a test of retention sets its own.
    TRACE_RETENTION_DAYS: '0',
    ...options.env,
  });
  const registry = await openRegistryStore(config);
  await registry.importBundle(parseBundle(options.bundle ?? smallBundle()));
  const authenticator = await createAuthenticator(config, registry);
  const traces = await openTraceStore(config);
  const seen = options.wrapRegistry ? options.wrapRegistry(registry) : registry;
  const tracesSeen = options.wrapTraces ? options.wrapTraces(traces) : traces;
  const app = await buildApp({
    services: {
      config,
      registry: seen,
      traces: tracesSeen,
      ...compact({ webhooks: await webhookGuard(config, options.webhookLog, options.webhookLookups) }),
    },
    authenticator,
    logger: false,
    ...(options.otlpFaults !== undefined ? { otlpFaults: options.otlpFaults } : {}),
    ...(options.rateLimiter !== undefined ? { rateLimiter: options.rateLimiter } : {}),
  });
  await app.ready();
  const issuer = await loadDevIssuer(dataDir);
  const token = (sub: string, org = 'org-a') => issuer.mint({ sub, org });
  return {
    app,
    config,
    registry,
    traces,
    authenticator,
    dataDir,
    token,
    auth: async (sub, org) => ({ authorization: `Bearer ${await token(sub, org)}` }),
    async close() {
      await app.close(); // closes the stores and the authenticator too
      if (options.dataDir === undefined) await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
