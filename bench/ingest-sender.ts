/**
 * The load side of bench/ingest.ts, in a worker thread so that the server's event loop does only
 * server work (as it would with remote exporters): builds 64 OTLP bodies of `batch` spans, then
 * keeps `connections` requests in flight for `seconds` over keep-alive node:http connections (fetch
 * copies each body twice and would spend the machine's CPU on the client), and posts the counts
 * back. Every request carries new span ids (stampableBody), and only the spans the answer accepts
 * count: its partialSuccess.rejectedSpans (JSON, or protobuf decoded by the OpenTelemetry exporter's
 * deserializer) is subtracted.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { stampableBody } from './otlp-body.ts';

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
  /** Spans the answers accepted (sent minus partialSuccess.rejectedSpans); 0 for the bare baseline route. */
  accepted: number;
  /** Answers that carried a JSON or protobuf body this sender could read. */
  decoded: number;
  failures: number;
  elapsedS: number;
  statuses: Record<string, number>;
}

function post(
  agent: http.Agent,
  url: URL,
  headers: Record<string, string>,
  payload: Buffer,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(payload.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function send(job: SenderJob): Promise<SenderResult> {
  const bodies = Array.from({ length: 64 }, (_, i) => stampableBody(i, job.batch, job.json));
  const headers = {
    authorization: `Bearer ${job.token}`,
    'content-type': job.json ? 'application/json' : 'application/x-protobuf',
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const url = new URL(job.url);
  const statuses: Record<string, number> = {};
  let requests = 0;
  let failures = 0;
  let accepted = 0;
  let decoded = 0;
  let sent = 0;
  const deadline = Date.now() + job.seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: job.connections }, async (_, w) => {
      for (let i = w; Date.now() < deadline; i += job.connections) {
        // Connection w only ever sends bodies w, w + connections, …: stamping one never touches a body in flight.
        const body = bodies[i % bodies.length] as ReturnType<typeof stampableBody>;
        body.stamp(++sent);
        const { status, body: answer } = await post(agent, url, headers, body.body);
        if (status === 200) {
          requests++;
          const rejected = rejectedSpans(answer, job.json);
          if (rejected !== null) {
            decoded++;
            accepted += job.batch - rejected;
          }
        } else failures++;
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  return { requests, accepted, decoded, failures, elapsedS: (performance.now() - started) / 1000, statuses };
}

/** partialSuccess.rejectedSpans of an ExportTraceServiceResponse (0 when absent); null when the body is not one. */
function rejectedSpans(answer: Buffer, json: boolean): number | null {
  // An empty protobuf message is a valid ExportTraceServiceResponse (nothing rejected); empty JSON is not.
  if (answer.length === 0) return json ? null : 0;
  try {
    const response = json
      ? (JSON.parse(answer.toString('utf8')) as { partialSuccess?: { rejectedSpans?: number | string } })
      : ProtobufTraceSerializer.deserializeResponse(new Uint8Array(answer));
    return Number(response.partialSuccess?.rejectedSpans ?? 0);
  } catch {
    return null;
  }
}

parentPort?.postMessage(await send(workerData as SenderJob));
