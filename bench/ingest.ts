/**
 * Sustained OTLP ingestion over loopback, batches of 512 spans (protobuf, JSON, and protobuf over
 * gRPC) and of 512 Claude Code log records (protobuf), through the real app (auth, decoding,
 * mapping, DuckDB append, answer after commit). The senders run in a worker thread
 * (bench/ingest-sender.ts). Each gateway run gets a fresh service on an empty trace store, so that
 * no run pays for the background sealing of the one before. Baseline in the same run: a bare Fastify route on the same process that
 * reads the same bodies and answers 200, the transport's ceiling. Prints spans (records) per second.
 * Targets: protobuf >= 50,000 spans/s, JSON >= 25,000 spans/s, logs >= 50,000 records/s, gRPC
 * within 20 % of HTTP protobuf (ratio >= 0.8). Sustained throughput is what the
 * server carries when it is the bottleneck: 8 connections keep it busy (~170% CPU of 2 cores);
 * with 4 each request waits on the last one's commit and the figure measures latency instead.
 * Usage: npm run bench:ingest [-- --seconds 10 --connections 8 --engine duckdb|postgres]
 * (`postgres`: two replicas into one PostgreSQL, bench/ingest-postgres.ts).
 * `-- --against <commit> [--rounds 3]`: that commit and the working tree interleaved, medians,
 * spreads and their ratio (bench/ingest-compare.ts).
 */
import Fastify from 'fastify';
import { startOtlpGrpc } from '../src/grpc/otlp-grpc.ts';
import { argNumber, inWorker, startDemoApp } from './harness.ts';
import type { SenderJob, SenderResult } from './ingest-sender.ts';

if (process.argv.includes('--against')) {
  await import('./ingest-compare.ts');
  process.exit(0);
}
const engineArg = process.argv.indexOf('--engine');
if (engineArg >= 0 && process.argv[engineArg + 1] === 'postgres') {
  await import('./ingest-postgres.ts');
  process.exit(0);
}
const seconds = argNumber('seconds', 10);
const connections = argNumber('connections', 8);
const BATCH = 512;
const bare = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
bare.addContentTypeParser(['application/x-protobuf', 'application/json'], { parseAs: 'buffer' }, (_req, body, done) =>
  done(null, body),
);
bare.post('/v1/:signal', async (_req, reply) => reply.code(200).type('application/json').send('{}'));
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

function run(url: string, token: string, json: boolean, signal: SenderJob['signal']): Promise<SenderResult> {
  const job: SenderJob = {
    url: url.startsWith('grpc://') ? url : `${url}/v1/${signal}`,
    signal,
    token,
    json,
    seconds,
    connections,
    batch: BATCH,
  };
  return inWorker(new URL('./ingest-sender.ts', import.meta.url), job);
}

/** One gateway run on a fresh service (HTTP, or gRPC beside it): the answers' counts and what was stored. */
async function gatewayRun(json: boolean, signal: SenderJob['signal'], grpc = false) {
  const demo = await startDemoApp({ env: { DEMO_TRACE_SPANS: '0' } });
  const server = grpc
    ? await startOtlpGrpc(demo.app, {
        config: demo.config,
        port: 0,
        authenticate: (header) => demo.authenticator.authenticate(header),
        registry: demo.registry,
      })
    : null;
  const result = await run(server !== null ? `grpc://127.0.0.1:${server.port}` : demo.url, demo.token, json, signal);
  const stored = await demo.traces.countSpans();
  const healthy = (await demo.app.inject({ method: 'GET', url: '/healthz' })).statusCode === 200;
  await server?.close();
  await demo.close();
  return { result, stored, healthy };
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
  `OTLP ingestion: ${seconds}s per run, ${connections} concurrent senders in a worker thread, ${BATCH} spans or records per request`,
);
const runs = [
  { name: 'protobuf', json: false, signal: 'traces', target: 50_000 },
  { name: 'JSON', json: true, signal: 'traces', target: 25_000 },
  { name: 'logs', json: false, signal: 'logs', target: 50_000 },
] as const;
let httpProtobuf = 0;
let healthy = true;
for (const { name, json, signal, target } of runs) {
  const baseline = await run(bareUrl, 'none', json, signal);
  const { result: gateway, stored, healthy: ok } = await gatewayRun(json, signal);
  healthy &&= ok;
  if (name === 'protobuf') httpProtobuf = rate(gateway);
  const unit = signal === 'logs' ? 'records/s' : 'spans/s';
  console.log(`  ${name.padEnd(8)} baseline (bare route, body read)  ${fmt(sentRate(baseline))} ${unit}`);
  console.log(
    `  ${name.padEnd(8)} gateway                           ${fmt(rate(gateway))} ${unit} accepted  (${gateway.requests} requests, ${gateway.failures} failed, ${gateway.decoded} answers read; statuses ${statuses(gateway)}; target >= ${target.toLocaleString('en-US')}: ${rate(gateway) >= target ? 'met' : 'missed'}; ratio ${(rate(gateway) / sentRate(baseline)).toFixed(2)})`,
  );
  console.log(
    `  ${name.padEnd(8)} accepted by the answers ${gateway.accepted.toLocaleString('en-US')}, stored ${stored.toLocaleString('en-US')} spans: ${gateway.accepted === stored ? 'equal' : 'DIFFERENT'}`,
  );
}
{
  const { result: gateway, stored, healthy: ok } = await gatewayRun(false, 'traces', true);
  healthy &&= ok;
  const ratio = rate(gateway) / httpProtobuf;
  console.log(
    `  gRPC     gateway (traces, protobuf)        ${fmt(rate(gateway))} spans/s accepted  (${gateway.requests} requests, ${gateway.failures} failed; statuses ${statuses(gateway)}; vs HTTP protobuf ${ratio.toFixed(2)}, target >= 0.80: ${ratio >= 0.8 ? 'met' : 'missed'})`,
  );
  console.log(
    `  gRPC     accepted by the answers ${gateway.accepted.toLocaleString('en-US')}, stored ${stored.toLocaleString('en-US')}: ${gateway.accepted === stored ? 'equal' : 'DIFFERENT'}`,
  );
}
console.log(`  services healthy after their runs: ${healthy ? 'yes' : 'no'}`);
await bare.close();
