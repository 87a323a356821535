/**
 * The service as users run it, `node src/main.ts` in a process of its own (its own data directory,
 * demo data seeded on its first start, development mode, errors only in its log), for the
 * benchmarks that attack or load it from outside (bench/abuse-*.ts): the load never shares its
 * event loop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort, waitUntilReady } from '../test/fixtures/service-process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface ServiceOptions {
  dataDir: string;
  /** Settings over the defaults above (DEMO_TRACE_SPANS, quotas, …). */
  env?: Record<string, string>;
  /** The port (a restart keeps its own); a free one when absent. */
  port?: number;
  /** The checkout to run (another commit's, to compare); this one by default. */
  root?: string;
  /** Node options (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  /** A command the service runs under (e.g. `prlimit --nofile=4096:4096`). */
  under?: string[];
  /** How long start-up may take (seeding millions of spans takes minutes). */
  readyTimeoutMs?: number;
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  origin: string;
  /** Ends the service (SIGTERM) and resolves once it has exited. */
  stop(): Promise<void>;
}

export async function startService(options: ServiceOptions): Promise<ServiceProcess> {
  const port = options.port ?? (await freePort());
  const origin = `http://127.0.0.1:${port}`;
  const node = [process.execPath, ...(options.nodeArgs ?? []), 'src/main.ts'];
  const [command, ...args] = [...(options.under ?? []), ...node] as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: options.root ?? ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      NODE_ENV: 'development',
      DATA_DIR: options.dataDir,
      PORT: String(port),
      SEED_DEMO: 'true',
      LOG_LEVEL: 'error',
      ...options.env,
    },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (!(await waitUntilReady(origin, options.readyTimeoutMs))) {
    child.kill('SIGKILL');
    throw new Error('the service did not become ready');
  }
  return {
    child,
    port,
    origin,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
