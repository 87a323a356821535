/**
 * Sustained OTLP/HTTP ingestion over loopback, batches of 512 spans, protobuf then JSON, through
 * the real app (auth, decoding, mapping, DuckDB append, answer after commit). The senders run in a
 * worker thread (bench/ingest-sender.ts). Baseline in the same run: a bare Fastify route on the
 * same process that reads the same bodies and answers 200, the transport's ceiling. Prints spans/s.
 * Targets: protobuf >= 50,000 spans/s, JSON >= 25,000 spans/s. Sustained throughput is what the
 * server carries when it is the bottleneck: 8 connections keep it busy (~170% CPU of 2 cores);
 * with 4 each request waits on the last one's commit and the figure measures latency instead.
 * Usage: npm run bench:ingest [-- --seconds 10 --connections 8]
 */
import Fastify from 'fastify';
import { argNumber, inWorker, startDemoApp } from './harness.ts';
import type { SenderJob, SenderResult } from './ingest-sender.ts';

const seconds = argNumber('seconds', 10);
const connections = argNumber('connections', 8);
const BATCH = 512;
const demo = await startDemoApp({ env: { DEMO_TRACE_SPANS: '0' } });
const bare = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
bare.addContentTypeParser(['application/x-protobuf', 'application/json'], { parseAs: 'buffer' }, (_req, body, done) =>
  done(null, body),
);
bare.post('/v1/traces', async (_req, reply) => reply.code(200).type('application/json').send('{}'));
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

function run(url: string, json: boolean): Promise<SenderResult> {
  const job: SenderJob = { url: `${url}/v1/traces`, token: demo.token, json, seconds, connections, batch: BATCH };
  return inWorker(new URL('./ingest-sender.ts', import.meta.url), job);
}

/** Spans per second: for the gateway the spans its answers accepted, for the bare route (which stores nothing) every span sent. */
const rate = (r: SenderResult) => r.accepted / r.elapsedS;
const sentRate = (r: SenderResult) => (r.requests * BATCH) / r.elapsedS;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(9);
const statuses = (r: SenderResult) =>
  Object.entries(r.statuses)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');

console.log(
  `OTLP ingestion: ${seconds}s per run, ${connections} concurrent senders in a worker thread, ${BATCH} spans per request`,
);
for (const [name, json, target] of [
  ['protobuf', false, 50_000],
  ['JSON', true, 25_000],
] as const) {
  const baseline = await run(bareUrl, json);
  const before = await demo.traces.countSpans();
  const gateway = await run(demo.url, json);
  const stored = (await demo.traces.countSpans()) - before;
  console.log(`  ${name.padEnd(8)} baseline (bare route, body read)  ${fmt(sentRate(baseline))} spans/s`);
  console.log(
    `  ${name.padEnd(8)} gateway                           ${fmt(rate(gateway))} spans/s accepted  (${gateway.requests} requests, ${gateway.failures} failed, ${gateway.decoded} answers read; statuses ${statuses(gateway)}; target >= ${target.toLocaleString('en-US')}: ${rate(gateway) >= target ? 'met' : 'missed'}; ratio ${(rate(gateway) / sentRate(baseline)).toFixed(2)})`,
  );
  console.log(
    `  ${name.padEnd(8)} accepted by the answers ${gateway.accepted.toLocaleString('en-US')}, stored ${stored.toLocaleString('en-US')}: ${gateway.accepted === stored ? 'equal' : 'DIFFERENT'}`,
  );
}
const stored = await demo.app.inject({ method: 'GET', url: '/healthz' });
console.log(`  service still healthy: ${stored.statusCode === 200 ? 'yes' : 'no'}`);
await bare.close();
await demo.close();
