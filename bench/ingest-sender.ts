/**
 * The load side of bench/ingest.ts, in a worker thread so that the server's event loop does only
 * server work (as it would with remote exporters): builds 64 distinct OTLP bodies of `batch`
 * spans, then keeps `connections` requests in flight for `seconds` over keep-alive node:http
 * connections (fetch copies each body twice and would spend the machine's CPU on the client),
 * and posts the counts back.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { encodeExportRequest } from '../src/traces/otlp-decode.ts';

export interface SenderJob {
  url: string;
  token: string;
  json: boolean;
  seconds: number;
  connections: number;
  batch: number;
}

export interface SenderResult {
  requests: number;
  failures: number;
  elapsedS: number;
  statuses: Record<string, number>;
}

function body(i: number, job: SenderJob): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: job.batch }, (_, j) => {
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
      traceId: job.json ? traceId.toString('hex') : traceId, spanId: job.json ? spanId.toString('hex') : spanId, name: `span-${j}`,
      startTimeUnixNano: String(start), endTimeUnixNano: String(start + 5_000_000n), attributes: attrs,
    };
  });
  const message = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] }, scopeSpans: [{ spans }] }] };
  return job.json ? Buffer.from(JSON.stringify(message)) : encodeExportRequest(message);
}

function post(agent: http.Agent, url: URL, headers: Record<string, string>, payload: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(payload.length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function send(job: SenderJob): Promise<SenderResult> {
  const bodies = Array.from({ length: 64 }, (_, i) => body(i, job));
  const headers = { authorization: `Bearer ${job.token}`, 'content-type': job.json ? 'application/json' : 'application/x-protobuf' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const url = new URL(job.url);
  const statuses: Record<string, number> = {};
  let requests = 0;
  let failures = 0;
  const deadline = Date.now() + job.seconds * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: job.connections }, async (_, w) => {
    for (let i = w; Date.now() < deadline; i += job.connections) {
      const status = await post(agent, url, headers, bodies[i % bodies.length] as Buffer);
      if (status === 200) requests++; else failures++;
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  }));
  agent.destroy();
  return { requests, failures, elapsedS: (performance.now() - started) / 1000, statuses };
}

parentPort?.postMessage(await send(workerData as SenderJob));
