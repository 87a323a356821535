/**
 * `npm run bench:ingest -- --engine postgres`: OTLP/HTTP protobuf traces (512 spans per request)
 * into one PostgreSQL through two replicas at once, each a full service (auth, decoding, mapping,
 * COPY into `spans` and `trace_skills`, answer after commit) with its own senders in a worker
 * thread. Both replicas, the senders and PostgreSQL share this machine's cores. A fresh database
 * per run, dropped afterwards. Prints the spans per second the answers accepted, and checks that
 * every accepted span is stored once. Target (two replicas on one database): >= 25,000 spans/s.
 */
import pg from 'pg';
import { argNumber, inWorker, startDemoApp } from './harness.ts';
import type { SenderJob, SenderResult } from './ingest-sender.ts';

const seconds = argNumber('seconds', 10);
const connections = argNumber('connections', 8);
const BATCH = 512;
const TARGET = 25_000;
const PG_URL = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
const database = `gw_bench_ingest_${process.pid}`;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

await admin(`CREATE DATABASE ${database}`);
try {
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  const env = { DATABASE_URL: url.toString(), DEMO_TRACE_SPANS: '0' };
  // The first replica migrates and seeds the registry; the second finds it done.
  const a = await startDemoApp({ env });
  const b = await startDemoApp({ env });
  const job = (target: { url: string; token: string }): SenderJob => ({
    url: `${target.url}/v1/traces`,
    signal: 'traces',
    token: target.token,
    json: false,
    seconds,
    connections: Math.max(1, connections / 2),
    batch: BATCH,
  });
  const sender = new URL('./ingest-sender.ts', import.meta.url);
  const results = await Promise.all([a, b].map((r) => inWorker<SenderResult>(sender, job(r))));
  const accepted = results.reduce((n, r) => n + r.accepted, 0);
  const elapsed = Math.max(...results.map((r) => r.elapsedS));
  const stored = await a.traces.countSpans();
  const rate = accepted / elapsed;
  console.log(
    `OTLP ingestion into PostgreSQL: two replicas at once, ${seconds}s, ${connections} senders in all, ${BATCH} spans per request (protobuf)`,
  );
  results.forEach((r, i) =>
    console.log(
      `  replica ${i + 1}: ${Math.round(r.accepted / r.elapsedS).toLocaleString('en-US')} spans/s accepted (${r.requests} requests, ${r.failures} failed; statuses ${JSON.stringify(r.statuses)})`,
    ),
  );
  console.log(
    `  both: ${Math.round(rate).toLocaleString('en-US')} spans/s accepted (target >= ${TARGET.toLocaleString('en-US')}: ${rate >= TARGET ? 'met' : 'missed'})`,
  );
  console.log(
    `  accepted by the answers ${accepted.toLocaleString('en-US')}, stored ${stored.toLocaleString('en-US')}: ${accepted === stored ? 'equal' : 'DIFFERENT'}`,
  );
  await a.close();
  await b.close();
} finally {
  await admin(`DROP DATABASE ${database} WITH (FORCE)`);
}
