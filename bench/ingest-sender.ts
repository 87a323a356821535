/**
 * The load side of bench/ingest.ts, in a worker thread so that the server's event loop does only
 * server work (as it would with remote exporters): builds 64 OTLP bodies of `batch` spans or log
 * records, then keeps `connections` requests in flight for `seconds` over keep-alive node:http
 * connections (fetch copies each body twice and would spend the machine's CPU on the client) or
 * one gRPC channel, and posts the counts back. Every request carries new ids (stampableBody), and
 * only what the answer accepts counts: its partialSuccess.rejectedSpans / rejectedLogRecords (JSON,
 * or protobuf decoded by the OpenTelemetry exporter's deserializers) is subtracted.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import * as grpc from '@grpc/grpc-js';
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { stampableBody } from './otlp-body.ts';

export interface SenderJob {
  /** The route (`…/v1/traces`, `…/v1/logs`), or `grpc://host:port` for OTLP over gRPC. */
  url: string;
  signal: 'traces' | 'logs';
  token: string;
  json: boolean;
  seconds: number;
  connections: number;
  batch: number;
}

export interface SenderResult {
  requests: number;
  /** Spans or records the answers accepted (sent minus the partial success's rejected); 0 for the bare baseline route. */
  accepted: number;
  /** Answers that carried a JSON or protobuf body this sender could read. */
  decoded: number;
  failures: number;
  elapsedS: number;
  statuses: Record<string, number>;
  /** CPU milliseconds this sender's thread spent over its life (building its bodies included), so that a caller can tell the server's CPU from the process's. */
  cpuMs: number;
  /** The part of cpuMs spent while sending (the `seconds` of the run, bodies already built). */
  sendingCpuMs: number;
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

const GRPC_SERVICES = {
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
  logs: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
};

/** One request's sender: over HTTP (status as sent) or gRPC (OK -> 200, else 600 + the gRPC code). */
function sender(job: SenderJob): { post(body: Buffer): Promise<{ status: number; body: Buffer }>; close(): void } {
  if (job.url.startsWith('grpc://')) {
    const client = new grpc.Client(job.url.slice('grpc://'.length), grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${job.token}`);
    return {
      post: (body) =>
        new Promise((resolve) => {
          client.makeUnaryRequest(
            GRPC_SERVICES[job.signal],
            (b: Buffer) => b,
            (b: Buffer) => b,
            body,
            metadata,
            (err, value) => {
              resolve(
                err
                  ? { status: 600 + err.code, body: Buffer.alloc(0) }
                  : { status: 200, body: value ?? Buffer.alloc(0) },
              );
            },
          );
        }),
      close: () => {
        client.close();
      },
    };
  }
  const headers = {
    authorization: `Bearer ${job.token}`,
    'content-type': job.json ? 'application/json' : 'application/x-protobuf',
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const url = new URL(job.url);
  return {
    post: (body) => post(agent, url, headers, body),
    close: () => {
      agent.destroy();
    },
  };
}

async function send(job: SenderJob): Promise<SenderResult> {
  const bodies = Array.from({ length: 64 }, (_, i) => stampableBody(i, job.batch, job.json, job.signal));
  const transport = sender(job);
  const statuses: Record<string, number> = {};
  let requests = 0;
  let failures = 0;
  let accepted = 0;
  let decoded = 0;
  let sent = 0;
  const deadline = Date.now() + job.seconds * 1000;
  const started = performance.now();
  const cpuAtStart = process.threadCpuUsage();
  await Promise.all(
    Array.from({ length: job.connections }, async (_, w) => {
      for (let i = w; Date.now() < deadline; i += job.connections) {
        // Connection w only ever sends bodies w, w + connections, …: stamping one never touches a body in flight.
        const body = bodies[i % bodies.length] as ReturnType<typeof stampableBody>;
        body.stamp(++sent);
        const { status, body: answer } = await transport.post(body.body);
        if (status === 200) {
          requests++;
          const rejected = rejectedOf(answer, job.json, job.signal);
          if (rejected !== null) {
            decoded++;
            accepted += job.batch - rejected;
          }
        } else failures++;
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  transport.close();
  const elapsedS = (performance.now() - started) / 1000;
  const cpu = process.threadCpuUsage();
  const sending = process.threadCpuUsage(cpuAtStart);
  return {
    requests,
    accepted,
    decoded,
    failures,
    elapsedS,
    statuses,
    cpuMs: (cpu.user + cpu.system) / 1000,
    sendingCpuMs: (sending.user + sending.system) / 1000,
  };
}

/** What an Export answer rejected (0 when it has no partial success); null when the body is not an answer. */
function rejectedOf(answer: Buffer, json: boolean, signal: SenderJob['signal']): number | null {
  // An empty protobuf message is a valid answer (nothing rejected); empty JSON is not.
  if (answer.length === 0) return json ? null : 0;
  try {
    type Partial = { partialSuccess?: { rejectedSpans?: number | string; rejectedLogRecords?: number | string } };
    const response: Partial = json
      ? (JSON.parse(answer.toString('utf8')) as Partial)
      : signal === 'traces'
        ? ProtobufTraceSerializer.deserializeResponse(new Uint8Array(answer))
        : ProtobufLogsSerializer.deserializeResponse(new Uint8Array(answer));
    const p = response.partialSuccess;
    return Number((signal === 'traces' ? p?.rejectedSpans : p?.rejectedLogRecords) ?? 0);
  } catch {
    return null;
  }
}

parentPort?.postMessage(await send(workerData as SenderJob));
