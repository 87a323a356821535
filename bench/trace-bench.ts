/**
 * The service over a generated trace store, for the benchmarks that query telemetry at scale
 * (stats.ts, tool-usage.ts): the demo registry (seeded in a fresh data directory, real
 * authenticator and dev token) and an embedded DuckDB store in its own thread holding N demo spans,
 * all sealed as a running service has them seconds after ingestion (the demo telemetry of
 * src/seed/seed.ts: org-acme's skills, users and 40 of its tools). The store file is kept in
 * $TMPDIR under `name` and reused while it holds exactly N spans; generation shows its progress.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { createAuthenticator } from '../src/auth/authenticator.ts';
import { loadDevIssuer } from '../src/auth/dev-issuer.ts';
import { loadConfig } from '../src/config.ts';
import { demoTraceOptions, seedDemoIfEmpty } from '../src/seed/seed.ts';
import { ThreadedTraceStore } from '../src/store/duckdb/threaded-store.ts';
import { openRegistryStore } from '../src/store/open-registry.ts';
import type { RegistryStore } from '../src/store/registry-port.ts';
import { demoSpans } from '../src/traces/demo-traces.ts';

export interface TraceBenchApp {
  app: FastifyInstance;
  registry: RegistryStore;
  traces: ThreadedTraceStore;
  /** A dev token of user-alice, admin of org-acme. */
  token: string;
  close: () => Promise<void>;
}

export async function traceBenchApp(o: {
  name: string;
  spans: number;
  env?: Record<string, string>;
  /** Where the generated spans end, and how many days they cover. */
  endS: number;
  days: number;
}): Promise<TraceBenchApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bench-traces-'));
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, REQUEST_TIMEOUT_MS: '60000', ...o.env });
  const registry = await openRegistryStore(config);
  await seedDemoIfEmpty(registry);
  const file = path.join(os.tmpdir(), `gw-bench-${o.name}-${o.spans}.duckdb`);
  let traces = await ThreadedTraceStore.open(file);
  if ((await traces.countSpans()) !== o.spans) {
    await traces.close();
    fs.rmSync(file, { force: true });
    fs.rmSync(`${file}.wal`, { force: true });
    traces = await ThreadedTraceStore.open(file);
    const started = Date.now();
    let done = 0;
    const options = await demoTraceOptions(registry, o.endS, o.days);
    if (options === null) throw new Error('the demo registry has no skill to record telemetry for');
    for (const batch of demoSpans({ ...options, spans: o.spans }, 100_000)) {
      await traces.insertSpans(batch);
      done += batch.length;
      const rate = done / ((Date.now() - started) / 1000);
      process.stderr.write(
        `\rgenerating spans ${done.toLocaleString()} / ${o.spans.toLocaleString()} (${Math.round((100 * done) / o.spans)}%, ${Math.round(rate).toLocaleString()}/s)   `,
      );
    }
    process.stderr.write('\n');
  }
  await traces.seal();
  const app = await buildApp({
    services: { config, registry, traces },
    authenticator: await createAuthenticator(config, registry),
    logger: false,
  });
  const token = await (await loadDevIssuer(dataDir)).mint({ sub: 'user-alice', org: 'org-acme' });
  return {
    app,
    registry,
    traces,
    token,
    close: async () => {
      await app.close(); // closes the stores too
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The median of some timings. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
