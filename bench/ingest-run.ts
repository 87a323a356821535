/**
 * One run of `bench:ingest -- --against <commit>` (bench/ingest-compare.ts), in a process of its
 * own: the service code measured is that of `root` (the working tree, or a worktree of the commit),
 * the load is this tree's, so that both sides of a comparison get the same requests and the same
 * counting whatever the commit's own benchmark did. From `root` it imports only
 * `bench/harness.ts`'s startDemoApp (a fresh service on the demo registry and an empty trace store,
 * listening on loopback), `src/grpc/otlp-grpc.ts`'s startOtlpGrpc for gRPC and, when the harness
 * does not hand out its authenticator, `src/auth/authenticator.ts`. The senders are this tree's
 * bench/ingest-sender.ts in a worker thread, as in the single run. One service, or with a
 * PostgreSQL URL two replicas into it at once, each with half the senders (as
 * bench/ingest-postgres.ts). Answers its parent over IPC, then exits.
 * Usage (by the driver): node bench/ingest-run.ts '<RunJob as JSON>'
 */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BenchApp } from './harness.ts';
import type { SenderJob, SenderResult } from './ingest-sender.ts';

export type Kind = 'protobuf' | 'JSON' | 'logs' | 'gRPC';

export interface RunJob {
  /** Directory of the code to measure. */
  root: string;
  kind: Kind;
  seconds: number;
  connections: number;
  batch: number;
  /** A fresh PostgreSQL database for two replicas; absent: one service on the embedded default. */
  databaseUrl?: string;
}

export type RunResult =
  | {
      served: true;
      /** Spans (records) the answers accepted, all replicas together. */
      accepted: number;
      requests: number;
      failures: number;
      statuses: Record<string, number>;
      elapsedS: number;
      /** CPU milliseconds of the process less the senders' threads: the service's share (PostgreSQL's own not included). */
      serverCpuMs: number;
      /** CPU milliseconds of the senders' threads while sending (the load generator shares the machine's cores with the service). */
      senderCpuMs: number;
      /** Spans the trace store holds after the run; null when the commit's harness does not hand out its trace store. */
      stored: number | null;
      healthy: boolean;
    }
  | { served: false; reason: string };

/** The harness's app as any commit's harness answers it: older ones hand out neither the trace store nor the authenticator. */
type MeasuredApp = Omit<BenchApp, 'traces' | 'authenticator'> & Partial<Pick<BenchApp, 'traces' | 'authenticator'>>;

function runSender(job: SenderJob): Promise<SenderResult> {
  const worker = new Worker(new URL('./ingest-sender.ts', import.meta.url), { workerData: job });
  return new Promise((resolve, reject) => {
    worker.once('message', (result: SenderResult) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      reject(new Error(`the sender exited with code ${code} before answering`));
    });
  });
}

async function measure(job: RunJob): Promise<RunResult> {
  const root = pathToFileURL(`${job.root}/`);
  const grpcModule = new URL('src/grpc/otlp-grpc.ts', root);
  if (job.kind === 'gRPC' && !fs.existsSync(grpcModule)) return { served: false, reason: 'no OTLP over gRPC' };
  const harness = (await import(new URL('bench/harness.ts', root).href)) as {
    startDemoApp(options: { env: Record<string, string> }): Promise<MeasuredApp>;
  };
  const env: Record<string, string> = {
    DEMO_TRACE_SPANS: '0',
    ...(job.databaseUrl !== undefined ? { DATABASE_URL: job.databaseUrl } : {}),
  };
  // One after the other: the first replica migrates and seeds the database, the second finds it done.
  const apps: MeasuredApp[] = [await harness.startDemoApp({ env })];
  if (job.databaseUrl !== undefined) apps.push(await harness.startDemoApp({ env }));
  const closers: (() => Promise<void>)[] = apps.map((a) => a.close);
  try {
    const signal: SenderJob['signal'] = job.kind === 'logs' ? 'logs' : 'traces';
    if (signal === 'logs') {
      const probe = await apps[0]!.app.inject({
        method: 'POST',
        url: '/v1/logs',
        headers: { authorization: `Bearer ${apps[0]!.token}`, 'content-type': 'application/x-protobuf' },
        payload: Buffer.alloc(0),
      });
      if (probe.statusCode === 404) return { served: false, reason: 'no OTLP logs route' };
    }
    const urls: string[] = [];
    for (const a of apps) {
      if (job.kind !== 'gRPC') {
        urls.push(`${a.url}/v1/${signal}`);
        continue;
      }
      const { startOtlpGrpc } = (await import(grpcModule.href)) as typeof import('../src/grpc/otlp-grpc.ts');
      let authenticator = a.authenticator;
      if (authenticator === undefined) {
        const { createAuthenticator } = (await import(
          new URL('src/auth/authenticator.ts', root).href
        )) as typeof import('../src/auth/authenticator.ts');
        const own = await createAuthenticator(a.config, a.registry);
        closers.unshift(async () => own.close?.());
        authenticator = own;
      }
      const auth = authenticator;
      // Both shapes of the options: a commit's own (host, maxMessageBytes) before the gRPC port read
      // its caps from the configuration, and the working tree's (config, registry).
      const options = {
        host: '127.0.0.1',
        port: 0,
        maxMessageBytes: a.config.bounds.otlpMaxDecompressedBytes,
        authenticate: (header: string | undefined) => auth.authenticate(header),
        config: a.config,
        registry: a.registry,
      };
      const server = await startOtlpGrpc(a.app, options);
      closers.unshift(() => server.close());
      urls.push(`grpc://127.0.0.1:${server.port}`);
    }
    const jobs = apps.map((a, i): SenderJob => ({
      url: urls[i]!,
      signal,
      token: a.token,
      json: job.kind === 'JSON',
      seconds: job.seconds,
      connections: Math.max(1, Math.round(job.connections / apps.length)),
      batch: job.batch,
    }));
    const cpu = process.cpuUsage();
    const results = await Promise.all(jobs.map(runSender));
    const used = process.cpuUsage(cpu);
    const statuses: Record<string, number> = {};
    for (const r of results) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    const traces = apps[0]!.traces;
    let healthy = true;
    for (const a of apps) healthy &&= (await a.app.inject({ method: 'GET', url: '/healthz' })).statusCode === 200;
    return {
      served: true,
      accepted: results.reduce((n, r) => n + r.accepted, 0),
      requests: results.reduce((n, r) => n + r.requests, 0),
      failures: results.reduce((n, r) => n + r.failures, 0),
      statuses,
      elapsedS: Math.max(...results.map((r) => r.elapsedS)),
      serverCpuMs: (used.user + used.system) / 1000 - results.reduce((n, r) => n + r.cpuMs, 0),
      senderCpuMs: results.reduce((n, r) => n + r.sendingCpuMs, 0),
      stored: traces === undefined ? null : await traces.countSpans(),
      healthy,
    };
  } finally {
    for (const close of closers) await close();
  }
}

const result = await measure(JSON.parse(process.argv[2] ?? '') as RunJob);
// Exit once the answer is out: a commit's service may leave a timer or a pool that keeps a process alive.
if (process.send === undefined) {
  console.log(JSON.stringify(result));
  process.exit(0);
}
process.send(result, () => process.exit(0));
