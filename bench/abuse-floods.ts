/**
 * Connection floods and slow senders against a running service: the service started as
 * `node src/main.ts` (demo data, both ports) in its own process under a 4,096 open-file limit
 * (`prlimit --nofile=4096:4096`); attackers in their own processes (bench/abuse-floods-attacker.ts,
 * each with the machine's own limit, which Node raises to the hard limit); bench/abuse-sampler.ts
 * (a third process) asking GET /healthz every 10 ms over one keep-alive connection and reading the
 * service's RSS.
 *
 * 1. 20,000 idle connections to each port (two attackers of 10,000; TCP with nothing sent on the
 *    HTTP port, the HTTP/2 preface and nothing more on the gRPC port). Targets: the process
 *    survives; at most the port's cap are held; the others are closed at once (within 1 s of being
 *    made, not queued); every held one is closed by the server, within the idle timeout + 5 s; and
 *    once the flood ends, /healthz on a new connection answers within 100 ms.
 * 2. 48 slow 16 MiB gRPC calls (6 connections × 8 calls, each sending all but its last byte, never
 *    ending). Targets: every call closed within the receive deadline (REQUEST_TIMEOUT_MS, + 1 s for
 *    the status to leave and the connection to be cut) and RSS back within 100 MB of before.
 *
 *   node bench/abuse-floods.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { loadDevIssuer } from '../src/auth/dev-issuer.ts';
import { loadConfig } from '../src/config.ts';
import { freePort } from '../test/fixtures/service-process.ts';
import { startService } from './service-process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OPEN_FILES = 4096;
const FLOOD = 20_000;
const ATTACKERS = 2;
/** Shorter than the default (30 s) so that the run waits less; the rule is the same. */
const IDLE_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;
const MiB = 1024 * 1024;

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gw-floods-'));
const httpPort = await freePort();
const grpcPort = await freePort();
const origin = `http://127.0.0.1:${httpPort}`;
const serviceEnv = {
  NODE_ENV: 'development',
  DATA_DIR: dataDir,
  OTLP_GRPC_PORT: String(grpcPort),
  IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
  REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  SEED_DEMO: 'true',
  DEMO_TRACE_SPANS: '2000',
  LOG_LEVEL: 'error',
};
// The caps the service derives from the same settings and limit (checked below against what it holds).
const caps = loadConfig(serviceEnv, OPEN_FILES).connections;

const service = await startService({
  dataDir,
  port: httpPort,
  env: serviceEnv,
  under: ['prlimit', `--nofile=${OPEN_FILES}:${OPEN_FILES}`],
});
const state: { exited: string | null } = { exited: null };
service.child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
  state.exited = `exited (${signal ?? String(code)})`;
});
const pid = service.child.pid as number;
const limits = /^Max open files\s+(\S+)\s+(\S+)/m.exec(await fs.readFile(`/proc/${pid}/limits`, 'utf8'));

const sampler = fork(path.join(ROOT, 'bench/abuse-sampler.ts'), [origin, String(pid)], { stdio: 'inherit' });
const ask = <T>(child: ChildProcess, cmd: string) =>
  new Promise<T>((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send({ cmd });
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Row {
  name: string;
  figure: string;
  target: string;
  ok: boolean | null;
}
const rows: Row[] = [];
const row = (name: string, figure: string, target: string, ok: boolean | null) => {
  rows.push({ name, figure, target, ok });
  console.log(
    `${name.padEnd(58)} ${figure.padStart(24)}  ${target.padEnd(26)} ${ok === null ? '' : ok ? 'ok' : 'MISSED'}`,
  );
};
const alive = async () =>
  state.exited === null &&
  (await fetch(`${origin}/healthz`).then(
    (r) => r.status === 200,
    () => false,
  ));

/** GET /healthz on a new connection each time: the worst of `n`, in ms (Infinity when one fails). */
async function freshHealthz(n: number): Promise<number> {
  let worst = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const ok = await new Promise<boolean>((resolve) => {
      const req = http.get(`${origin}/healthz`, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      });
      req.on('error', () => resolve(false));
    });
    worst = Math.max(worst, ok ? performance.now() - t0 : Infinity);
  }
  return worst;
}

interface IdleReport {
  attempted: number;
  connected: number;
  connectErrors: Record<string, number>;
  openedAllMs: number | null;
  open: number;
  lifetimesMs: number[];
}

const openFds = async () => (await fs.readdir(`/proc/${pid}/fd`)).length;

async function flood(label: string, port: number, mode: 'tcp' | 'h2', cap: number, reserved: number): Promise<void> {
  // The service's descriptors, every 50 ms: what it really holds (a client also counts connections
  // the server has closed but whose close it has not read yet).
  const idleFds = await openFds();
  let peakFds = idleFds;
  const fdWatch = setInterval(() => {
    void openFds().then(
      (n) => (peakFds = Math.max(peakFds, n)),
      () => undefined,
    );
  }, 50);
  const rssBefore = (await ask<{ rssMb: number }>(sampler, 'start')).rssMb;
  const attackers = Array.from({ length: ATTACKERS }, () =>
    fork(path.join(ROOT, 'bench/abuse-floods-attacker.ts'), ['idle', String(port), String(FLOOD / ATTACKERS), mode], {
      stdio: 'inherit',
    }),
  );
  const reports = () => Promise.all(attackers.map((a) => ask<IdleReport>(a, 'report')));
  let all = await reports();
  while (all.some((r) => r.openedAllMs === null)) {
    await sleep(250);
    all = await reports();
  }
  const openedAt = performance.now();
  const heldWhenOpened = all.reduce((n, r) => n + r.open, 0);
  // Every held connection is the server's to close: wait for it, up to the idle timeout + 30 s.
  while (all.some((r) => r.open > 0) && performance.now() - openedAt < IDLE_TIMEOUT_MS + 30_000) {
    await sleep(250);
    all = await reports();
  }
  clearInterval(fdWatch);
  for (const a of attackers) await ask(a, 'finish');
  const fresh = await freshHealthz(5);
  const watch = await ask<{ worstMs: number; peakRssMb: number }>(sampler, 'stop');
  const lifetimes = all.flatMap((r) => r.lifetimesMs);
  const atOnce = lifetimes.filter((ms) => ms < IDLE_TIMEOUT_MS / 2);
  const idle = lifetimes.filter((ms) => ms >= IDLE_TIMEOUT_MS / 2);
  const connected = all.reduce((n, r) => n + r.connected, 0);
  const errors = all.flatMap((r) => Object.entries(r.connectErrors)).map(([k, v]) => `${k} ${v}`);
  const stillOpen = all.reduce((n, r) => n + r.open, 0);
  const survived = await alive();
  console.log(
    `\n${label}: ${FLOOD.toLocaleString('en-US')} attempted, ${connected.toLocaleString('en-US')} connected${errors.length > 0 ? ` (not connected: ${errors.join(', ')})` : ''}, all made in ${((all[0]?.openedAllMs ?? 0) / 1000).toFixed(1)} s`,
  );
  row(
    `${label}: process alive after the flood`,
    survived ? 'alive' : (state.exited ?? 'not answering'),
    'alive',
    survived,
  );
  // Held connections, and one being accepted to be closed at once.
  const held = peakFds - idleFds;
  row(
    `${label}: service descriptors at peak over idle (${idleFds})`,
    held.toLocaleString('en-US'),
    `<= cap ${cap.toLocaleString('en-US')}${reserved > 0 ? ` - ${reserved}` : ''} + 1`,
    held <= cap - reserved + 1,
  );
  row(`${label}: held when the last was made`, heldWhenOpened.toLocaleString('en-US'), '', null);
  const slowestRefusal = atOnce.length === 0 ? 0 : Math.max(...atOnce);
  row(
    `${label}: over the cap, closed at once: slowest`,
    `${slowestRefusal.toFixed(0)} ms (${atOnce.length.toLocaleString('en-US')})`,
    '< 1000 ms',
    slowestRefusal < 1000 && atOnce.length + idle.length + stillOpen === connected,
  );
  const longestIdle = idle.length === 0 ? 0 : Math.max(...idle);
  row(
    `${label}: held, closed by the server: longest open`,
    `${longestIdle.toFixed(0)} ms (${idle.length.toLocaleString('en-US')})`,
    `<= ${(IDLE_TIMEOUT_MS + 5000).toLocaleString('en-US')} ms, none left`,
    stillOpen === 0 && longestIdle <= IDLE_TIMEOUT_MS + 5000,
  );
  row(`${label}: worst /healthz during the flood (kept connection)`, `${watch.worstMs.toFixed(1)} ms`, '', null);
  row(
    `${label}: /healthz on a new connection once it ends (worst of 5)`,
    `${fresh.toFixed(1)} ms`,
    '< 100 ms',
    fresh < 100,
  );
  row(
    `${label}: peak RSS over before (${rssBefore.toFixed(0)} MB)`,
    `${(watch.peakRssMb - rssBefore).toFixed(0)} MB`,
    '',
    null,
  );
}

interface SlowReport {
  calls: { startedAt: number; closedAt: number | null; status: string | null }[];
}
const STATUS_NAMES: Record<string, string> = { '4': 'DEADLINE_EXCEEDED', '8': 'RESOURCE_EXHAUSTED' };

async function slowSenders(): Promise<void> {
  const issuer = await loadDevIssuer(dataDir);
  const token = await issuer.mint({ sub: 'user-alice', org: 'org-acme', ttlSeconds: 3600 });
  await sleep(2000);
  const before = (await ask<{ rssMb: number }>(sampler, 'rss')).rssMb;
  await ask(sampler, 'start');
  const attacker = fork(
    path.join(ROOT, 'bench/abuse-floods-attacker.ts'),
    ['slow', String(grpcPort), token, '6', '8', String(16 * MiB)],
    { stdio: 'inherit' },
  );
  const t0 = performance.now();
  let report = await ask<SlowReport>(attacker, 'report');
  while (report.calls.some((c) => c.closedAt === null) && performance.now() - t0 < REQUEST_TIMEOUT_MS + 20_000) {
    await sleep(250);
    report = await ask<SlowReport>(attacker, 'report');
  }
  await ask(attacker, 'finish');
  const watch = await ask<{ worstMs: number; peakRssMb: number }>(sampler, 'stop');
  const closed = report.calls.filter((c) => c.closedAt !== null);
  const slowest = Math.max(0, ...closed.map((c) => (c.closedAt as number) - c.startedAt));
  const statuses = new Map<string, number>();
  for (const c of report.calls) {
    const name = c.status === null ? 'open' : (STATUS_NAMES[c.status] ?? c.status);
    statuses.set(name, (statuses.get(name) ?? 0) + 1);
  }
  console.log(
    `\ngRPC slow senders: ${report.calls.length} calls of 16 MiB less one byte; ends: ${[...statuses].map(([k, v]) => `${k} ${v}`).join(', ')}`,
  );
  row(
    'slow senders: calls closed by the server',
    `${closed.length}/${report.calls.length}`,
    `${report.calls.length}/${report.calls.length}`,
    closed.length === report.calls.length,
  );
  row(
    'slow senders: slowest call closed after its start',
    `${slowest.toFixed(0)} ms`,
    `<= ${(REQUEST_TIMEOUT_MS + 1000).toLocaleString('en-US')} ms`,
    closed.length === report.calls.length && slowest <= REQUEST_TIMEOUT_MS + 1000,
  );
  row('slow senders: peak RSS over before', `${(watch.peakRssMb - before).toFixed(0)} MB`, '', null);
  // Freed memory is returned as the collector runs; wait up to 30 s for it.
  const t1 = performance.now();
  let after = (await ask<{ rssMb: number }>(sampler, 'rss')).rssMb;
  while (after - before >= 100 && performance.now() - t1 < 30_000) {
    await sleep(1000);
    after = (await ask<{ rssMb: number }>(sampler, 'rss')).rssMb;
  }
  row(
    `slow senders: RSS after over before (${before.toFixed(0)} MB)`,
    `${(after - before).toFixed(0)} MB in ${((performance.now() - t1) / 1000).toFixed(0)} s`,
    '< 100 MB',
    after - before < 100,
  );
  const survived = await alive();
  row('slow senders: process alive', survived ? 'alive' : (state.exited ?? 'not answering'), 'alive', survived);
}

console.log(
  `service pid ${pid}: open files soft ${limits?.[1] ?? '?'} hard ${limits?.[2] ?? '?'}; caps HTTP ${caps.httpMax}, gRPC ${caps.grpcMax}, gRPC calls per caller ${caps.grpcCallsPerCaller}; IDLE_TIMEOUT_MS ${IDLE_TIMEOUT_MS}, REQUEST_TIMEOUT_MS ${REQUEST_TIMEOUT_MS}\n`,
);
console.log(`${'row'.padEnd(58)} ${'figure'.padStart(24)}  ${'target'.padEnd(26)} verdict`);
// The sampler's own keep-alive connection holds one of the HTTP port's slots.
await flood('HTTP port', httpPort, 'tcp', caps.httpMax, 1);
await flood('gRPC port', grpcPort, 'h2', caps.grpcMax, 0);
await slowSenders();

sampler.disconnect();
await service.stop();
await fs.rm(dataDir, { recursive: true, force: true });
const missed = rows.filter((r) => r.ok === false).length;
console.log(`\n${missed === 0 ? 'all targets met' : `${missed} target(s) missed`}`);
process.exit(missed === 0 ? 0 : 1);
