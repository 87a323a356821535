/**
 * Sustained OTLP/HTTP ingestion over loopback, batches of 512 spans, protobuf then JSON, through
 * the real app (auth, decoding, mapping, DuckDB append, answer after storing). Prints spans/s.
 * Targets: protobuf >= 50,000 spans/s, JSON >= 25,000 spans/s.
 * Usage: npm run bench:ingest [-- --seconds 10 --connections 4]
 */
import crypto from 'node:crypto';
import { encodeExportRequest } from '../src/traces/otlp-decode.ts';
import { argNumber, startDemoApp } from './harness.ts';

const seconds = argNumber('seconds', 10);
const connections = argNumber('connections', 4);
const BATCH = 512;
const demo = await startDemoApp({ env: { DEMO_TRACE_SPANS: '0' } });
const auth = { authorization: `Bearer ${demo.token}` };

function batch(i: number, json: boolean) {
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: BATCH }, (_, j) => {
    const traceId = crypto.randomBytes(16);
    const spanId = crypto.randomBytes(8);
    const kind = j % 4;
    const attrs = [
      { key: 'gen_ai.operation.name', value: { stringValue: kind === 0 ? 'invoke_skill' : kind === 1 ? 'chat' : 'execute_tool' } },
      { key: 'skill.id', value: { stringValue: 'skill-0001' } }, { key: 'skill.version', value: { intValue: 1 + (j % 3) } },
      { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } }, { key: 'gen_ai.usage.input_tokens', value: { intValue: 100 + j } },
      { key: 'gen_ai.usage.output_tokens', value: { intValue: 20 } }, { key: 'user.id', value: { stringValue: `user-${i % 7}` } },
      { key: 'session.id', value: { stringValue: `s-${i}` } }, { key: 'gen_ai.tool.name', value: { stringValue: 'create_issue' } },
    ];
    const start = now + BigInt(j) * 1000n;
    return {
      traceId: json ? traceId.toString('hex') : traceId, spanId: json ? spanId.toString('hex') : spanId, name: `span-${j}`,
      startTimeUnixNano: String(start), endTimeUnixNano: String(start + 5_000_000n), attributes: attrs,
    };
  });
  const message = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] }, scopeSpans: [{ spans }] }] };
  return json ? Buffer.from(JSON.stringify(message)) : encodeExportRequest(message);
}

async function run(json: boolean): Promise<{ spansPerS: number; requests: number; failures: number; statuses: string }> {
  const bodies = Array.from({ length: 64 }, (_, i) => batch(i, json));
  const type = json ? 'application/json' : 'application/x-protobuf';
  let requests = 0;
  let failures = 0;
  const statuses = new Map<number, number>();
  const deadline = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, async (_, w) => {
    for (let i = w; Date.now() < deadline; i += connections) {
      const res = await fetch(`${demo.url}/v1/traces`, { method: 'POST', body: bodies[i % bodies.length], headers: { ...auth, 'content-type': type } });
      await res.arrayBuffer();
      if (res.status === 200) requests++; else failures++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  return { spansPerS: (requests * BATCH) / elapsed, requests, failures, statuses: [...statuses].map(([k, v]) => `${k}: ${v}`).join(', ') };
}

console.log(`OTLP ingestion: ${seconds}s per encoding, ${connections} concurrent senders, ${BATCH} spans per request`);
const proto = await run(false);
console.log(`  protobuf  ${Math.round(proto.spansPerS).toLocaleString().padStart(9)} spans/s  (${proto.requests} requests, ${proto.failures} failed; target >= 50,000; statuses ${proto.statuses})`);
const json = await run(true);
console.log(`  JSON      ${Math.round(json.spansPerS).toLocaleString().padStart(9)} spans/s  (${json.requests} requests, ${json.failures} failed; target >= 25,000; statuses ${json.statuses})`);
console.log(`  stored ${(await demo.app.inject({ method: 'GET', url: '/healthz' })).statusCode === 200 ? 'ok' : '?'}`);
await demo.close();
