/**
 * `npm run seed:traces -- --spans N [--days 30] [--org org-acme]`: appends N demo spans for the
 * organization's skills, tools and agents (seed.ts demoTraceOptions) to the configured trace store
 * (stop the service first: the embedded DuckDB file has one owner), with a progress line on stderr.
 * Each run draws from a seed of its own, so that a second run adds new traces.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { openRegistryStore } from '../store/open-registry.ts';
import { openTraceStore } from '../store/open-traces.ts';
import { demoSpans } from '../seed/demo-traces.ts';
import { demoTraceOptions } from '../seed/seed.ts';

const { values } = parseArgs({
  options: {
    spans: { type: 'string', default: '100000' },
    days: { type: 'string', default: '30' },
    org: { type: 'string', default: 'org-acme' },
  },
});
const spans = Number(values.spans);
const days = Number(values.days);
if (!Number.isSafeInteger(spans) || spans <= 0 || !Number.isSafeInteger(days) || days <= 0) {
  process.stderr.write('usage: npm run seed:traces -- --spans N [--days D] [--org ID] (positive whole numbers)\n');
  process.exit(2);
}

const config = loadConfig();
const registry = await openRegistryStore(config);
const traces = await openTraceStore(config);
try {
  const endS = Math.floor(Date.now() / 1000);
  const found = await demoTraceOptions(registry, endS, days, values.org);
  if (found === null || found.users.length === 0) {
    process.stderr.write(
      `organization ${values.org} has no skills or users in the registry; start the service once (demo data) or import a bundle\n`,
    );
    process.exitCode = 1;
  } else {
    const started = Date.now();
    let done = 0;
    const options = { ...found, spans, seed: Date.now() % 100000 };
    for (const batch of demoSpans(options, 50_000)) {
      await traces.insertSpans(batch);
      done += batch.length;
      const pct = Math.round((100 * done) / spans);
      const bar = '#'.repeat(Math.floor(pct / 4)).padEnd(25, '.');
      process.stderr.write(
        `\r[${bar}] ${pct}% ${done.toLocaleString()} spans, ${Math.round(done / ((Date.now() - started) / 1000)).toLocaleString()}/s   `,
      );
    }
    process.stderr.write(
      `\nstored ${done.toLocaleString()} spans; the store now holds ${(await traces.countSpans()).toLocaleString()}\n`,
    );
  }
} finally {
  await traces.close();
  await registry.close();
}
