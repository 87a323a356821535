/**
 * Shared benchmark plumbing: a real app on the demo data set in a temp DATA_DIR, listening on
 * loopback, and an autocannon runner whose load generator runs in a worker thread
 * (autocannon-worker.ts), never on the server's event loop. Every benchmark measures a baseline in
 * the same run.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type autocannon from 'autocannon';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import type { Authenticator } from '../src/auth/caller.ts';
import { createAuthenticator } from '../src/auth/authenticator.ts';
import { loadDevIssuer } from '../src/auth/dev-issuer.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { openRegistryStore } from '../src/store/open-registry.ts';
import { openTraceStore } from '../src/store/open-traces.ts';
import type { RegistryStore } from '../src/store/registry-port.ts';
import type { TraceStore } from '../src/store/trace-port.ts';
import { seedDemoIfEmpty } from '../src/seed/seed.ts';

export interface BenchApp {
  app: FastifyInstance;
  url: string;
  config: Config;
  registry: RegistryStore;
  traces: TraceStore;
  authenticator: Authenticator;
  token: string;
  close: () => Promise<void>;
}

/**
 * The demo data set, the real authenticator (unless one is given), listening on 127.0.0.1. The
 * trace store is the configured one unless `traces` opens another over the seeded registry.
 */
export async function startDemoApp(
  options: {
    authenticator?: Authenticator;
    env?: Record<string, string>;
    traces?: (registry: RegistryStore) => Promise<TraceStore>;
  } = {},
): Promise<BenchApp> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gw-bench-'));
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, RATE_LIMIT_PER_MIN: '100000000', ...options.env });
  const registry = await openRegistryStore(config);
  await seedDemoIfEmpty(registry);
  const authenticator = options.authenticator ?? (await createAuthenticator(config, registry));
  const traces = options.traces === undefined ? await openTraceStore(config) : await options.traces(registry);
  const app = await buildApp({ services: { config, registry, traces }, authenticator, logger: false });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const token = await (await loadDevIssuer(dataDir)).mint({ sub: 'user-alice', org: 'org-acme', ttlSeconds: 3600 });
  return {
    app,
    url,
    config,
    registry,
    traces,
    authenticator,
    token,
    close: async () => {
      await app.close(); // closes the stores and the authenticator too
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Requests completed in the run. */
  requests: number;
  /**
   * CPU milliseconds of this (the server's) thread per completed request: steadier than req/s on a
   * shared machine, and free of the load generator's share (it runs in its own thread).
   */
  cpuMs: number;
}

export async function load(opts: {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  seconds?: number;
}): Promise<LoadResult> {
  const cpu = process.threadCpuUsage();
  const result = await autocannonInWorker({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers ?? {},
    ...(opts.body !== undefined ? { body: opts.body } : {}),
    connections: opts.connections ?? 10,
    duration: opts.seconds ?? 10,
  });
  const used = process.threadCpuUsage(cpu);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    requests: result.requests.total,
    cpuMs: (used.user + used.system) / 1000 / Math.max(1, result.requests.total),
  };
}

/** Runs autocannon with these options in a worker thread and answers its result. */
export function autocannonInWorker(options: autocannon.Options): Promise<autocannon.Result> {
  return inWorker(new URL('./autocannon-worker.ts', import.meta.url), options);
}

/** Runs a load-generating script in a worker thread with `data` as its workerData; answers its one message. */
export function inWorker<T>(script: URL, data: unknown): Promise<T> {
  const worker = new Worker(script, { workerData: data });
  return new Promise((resolve, reject) => {
    worker.once('message', (result: T) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      reject(new Error(`the worker exited with code ${code} before answering`));
    });
  });
}

export function fmt(r: LoadResult): string {
  return `${r.rps.toFixed(0).padStart(7)} req/s  p50 ${String(r.p50).padStart(4)} ms  p99 ${String(r.p99).padStart(4)} ms  non2xx ${r.non2xx}  errors ${r.errors}  server CPU ${r.cpuMs.toFixed(3)} ms/request`;
}

export function argNumber(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} needs a positive number`);
  return n;
}
