/**
 * The service over a generated trace store, for the benchmarks that query telemetry at scale
 * (stats.ts, tool-usage.ts): the demo app of harness.ts over an embedded DuckDB store in its own
 * thread holding N demo spans, all sealed as a running service has them seconds after ingestion
 * (the demo telemetry of src/seed/seed.ts: org-acme's skills, users and 40 of its tools). The
 * store file is kept in $TMPDIR under `name` and reused while it holds exactly N spans; generation
 * shows its progress.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { demoTraceOptions } from '../src/seed/seed.ts';
import { ThreadedTraceStore } from '../src/store/duckdb/threaded-store.ts';
import type { RegistryStore } from '../src/store/registry-port.ts';
import { demoSpans } from '../src/seed/demo-traces.ts';
import { startDemoApp, type BenchApp } from './harness.ts';

export type TraceBenchApp = BenchApp & { traces: ThreadedTraceStore };

export async function traceBenchApp(o: {
  name: string;
  spans: number;
  env?: Record<string, string>;
  /** Where the generated spans end, and how many days they cover. */
  endS: number;
  days: number;
}): Promise<TraceBenchApp> {
  let traces: ThreadedTraceStore | undefined;
  const bench = await startDemoApp({
    env: { REQUEST_TIMEOUT_MS: '60000', ...o.env },
    traces: async (registry) => {
      traces = await generatedStore(registry, o);
      return traces;
    },
  });
  return { ...bench, traces: traces as ThreadedTraceStore };
}

/** The store file of `name` holding exactly `spans` demo spans (generated when it does not), sealed. */
async function generatedStore(
  registry: RegistryStore,
  o: { name: string; spans: number; endS: number; days: number },
): Promise<ThreadedTraceStore> {
  // v3: spans run under agents the registry declares, with providers and cache tokens (a store of
  // an earlier version is generated again).
  const file = path.join(os.tmpdir(), `gw-bench-${o.name}-${o.spans}-v3.duckdb`);
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
  return traces;
}

/** The median of some timings. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
