/**
 * The load side of bench/ingest.ts, in a worker thread so that the server's event loop does only
 * server work (as it would with remote exporters): builds 64 distinct OTLP bodies of `batch`
 * spans, then keeps `connections` requests in flight for `seconds` over keep-alive node:http
 * connections (fetch copies each body twice and would spend the machine's CPU on the client),
 * and posts the counts back.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { benchBody } from './otlp-body.ts';

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

function post(agent: http.Agent, url: URL, headers: Record<string, string>, payload: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(payload.length) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function send(job: SenderJob): Promise<SenderResult> {
  const bodies = Array.from({ length: 64 }, (_, i) => benchBody(i, job.batch, job.json));
  const headers = {
    authorization: `Bearer ${job.token}`,
    'content-type': job.json ? 'application/json' : 'application/x-protobuf',
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const url = new URL(job.url);
  const statuses: Record<string, number> = {};
  let requests = 0;
  let failures = 0;
  const deadline = Date.now() + job.seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: job.connections }, async (_, w) => {
      for (let i = w; Date.now() < deadline; i += job.connections) {
        const status = await post(agent, url, headers, bodies[i % bodies.length] as Buffer);
        if (status === 200) requests++;
        else failures++;
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  return { requests, failures, elapsedS: (performance.now() - started) / 1000, statuses };
}

parentPort?.postMessage(await send(workerData as SenderJob));
