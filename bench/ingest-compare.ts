/**
 * `npm run bench:ingest -- --against <commit> [--rounds 3] [--engine postgres] [--only protobuf,JSON]
 * [--seconds 10] [--connections 8] [--keep-modules]`: the ingestion of a commit (A) and of the
 * working tree (B) measured interleaved, so that a difference between them can be told from the
 * noise of a shared machine. A single run of each moves by ±30 % from one run to the next; here
 * every kind (protobuf, JSON, logs, gRPC) runs `rounds` times on each side, the sides back to back
 * in A B, B A, A B … order (bench/compare-stats.ts), each run in its own process on a fresh service
 * (bench/ingest-run.ts), and the summary prints each side's median and spread (min–max) and the
 * ratio of the medians, in accepted spans per second and in server CPU per span (steadier when
 * other work shares the cores).
 *
 * The commit is checked out into a temporary `git worktree add --detach`, removed afterwards. Its
 * node_modules is a link to the working tree's when its package-lock.json is the same, else `npm ci
 * --ignore-scripts` installs its own (the install scripts build the console and fetch a Node binary,
 * neither of which ingestion needs: both sides run on this process's Node); `--keep-modules` keeps
 * that install under the temp directory for later comparisons with the same lock (bisecting), which
 * reuse a kept install whether or not they pass it. Both sides run this tree's load generator and
 * counting, and import from the commit only bench/harness.ts and the modules bench/ingest-run.ts
 * names, so any commit whose harness has startDemoApp({ env }) can be measured.
 * `--engine postgres`: two replicas of each side into one fresh PostgreSQL database per run
 * (DATABASE_URL_TEST, else the local test database), as bench/ingest-postgres.ts.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { compare, schedule, verdict, type Comparison, type Side } from './compare-stats.ts';
import { argNumber } from './harness.ts';
import type { Kind, RunJob, RunResult } from './ingest-run.ts';

const KINDS: readonly Kind[] = ['protobuf', 'JSON', 'logs', 'gRPC'];
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD = fileURLToPath(new URL('./ingest-run.ts', import.meta.url));
const BATCH = 512;
const PG_URL = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';

function argText(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = process.argv[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`--${name} needs a value`);
  return value;
}

const against = argText('against') ?? '';
const rounds = argNumber('rounds', 3);
if (!Number.isInteger(rounds)) throw new Error('--rounds needs a whole number');
const seconds = argNumber('seconds', 10);
const connections = argNumber('connections', 8);
const engine = argText('engine') ?? 'duckdb';
if (engine !== 'duckdb' && engine !== 'postgres') throw new Error('--engine is duckdb or postgres');
const only = argText('only');
const kinds = KINDS.filter(
  (k) => only === undefined || only.split(',').some((o) => o.trim().toLowerCase() === k.toLowerCase()),
);
if (kinds.length === 0) throw new Error(`--only names none of ${KINDS.join(', ')}`);
const keepModules = process.argv.includes('--keep-modules');

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const sha = spawnSync('git', ['rev-parse', '--verify', '--quiet', `${against}^{commit}`], {
  cwd: ROOT,
  encoding: 'utf8',
}).stdout.trim();
if (against === '' || sha === '') throw new Error(`--against needs a commit of this repository (got '${against}')`);
const short = git('rev-parse', '--short', sha);
const head = git('rev-parse', '--short', 'HEAD');
const modified = spawnSync('git', ['diff', '--quiet', 'HEAD'], { cwd: ROOT }).status !== 0;

/** A temporary worktree of the commit with its node_modules; `remove` undoes all of it. */
async function checkout(): Promise<{ dir: string; modules: string; remove: () => void }> {
  const theirs = execFileSync('git', ['show', `${sha}:package-lock.json`], { cwd: ROOT, maxBuffer: 1 << 30 });
  const ours = fs.readFileSync(path.join(ROOT, 'package-lock.json'));
  const cache = path.join(
    os.tmpdir(),
    'gw-bench-node-modules',
    crypto.createHash('sha256').update(theirs).digest('hex').slice(0, 16),
  );
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bench-against-'));
  const dir = path.join(parent, short);
  const link = path.join(dir, 'node_modules');
  let installed = false;
  const remove = () => {
    // The link first, by itself: the worktree's removal must never reach into the modules it points to.
    if (fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() === true) fs.unlinkSync(link);
    const removed = spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'inherit' });
    if (removed.status !== 0) {
      fs.rmSync(dir, { recursive: true, force: true });
      spawnSync('git', ['worktree', 'prune'], { cwd: ROOT });
    }
    fs.rmSync(parent, { recursive: true, force: true });
    if (installed && !keepModules) fs.rmSync(cache, { recursive: true, force: true });
  };
  try {
    execFileSync('git', ['worktree', 'add', '--detach', dir, sha], {
      cwd: ROOT,
      stdio: 'pipe',
    });
    if (theirs.equals(ours)) {
      fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), link, 'dir');
      return { dir, modules: "the working tree's, same package-lock.json", remove };
    }
    const modules = path.join(cache, 'node_modules');
    const complete = path.join(cache, 'complete');
    if (!fs.existsSync(complete)) {
      console.log(`${short}'s package-lock.json differs from the working tree's: npm ci --ignore-scripts in ${dir}`);
      await inherit(npmCommand(['ci', '--ignore-scripts', '--no-audit', '--no-fund']), dir);
      installed = true;
      fs.rmSync(cache, { recursive: true, force: true });
      fs.mkdirSync(cache, { recursive: true });
      fs.renameSync(link, modules);
      fs.writeFileSync(complete, `${sha}\n`);
    }
    fs.symlinkSync(modules, link, 'dir');
    const kept = keepModules || !installed;
    return { dir, modules: `its own by npm ci${kept ? `, kept in ${modules}` : ''}`, remove };
  } catch (e) {
    remove();
    throw e;
  }
}

/** npm on this process's Node when run by npm (npm_execpath), else the npm on PATH. */
function npmCommand(args: string[]): [string, string[]] {
  const cli = process.env.npm_execpath;
  return cli !== undefined && cli.endsWith('.js') ? [process.execPath, [cli, ...args]] : ['npm', args];
}

let running: ChildProcess | null = null;

function inherit([command, args]: [string, string[]], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: 'inherit' });
    running = child;
    child.once('error', reject);
    child.once('exit', (code) => {
      running = null;
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}`));
    });
  });
}

/** One run in its own process: its answer over IPC. */
function runChild(job: RunJob): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, CHILD, JSON.stringify(job)], {
      cwd: job.root,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    running = child;
    let result: RunResult | undefined;
    child.on('message', (m) => (result = m as RunResult));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      running = null;
      if (result !== undefined) resolve(result);
      else reject(new Error(`a ${job.kind} run of ${job.root} exited (${code ?? signal}) without an answer`));
    });
  });
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let databases = 0;
/** The run on the embedded default, or on a fresh PostgreSQL database dropped afterwards. */
async function measure(root: string, kind: Kind): Promise<RunResult> {
  const job: RunJob = { root, kind, seconds, connections, batch: BATCH };
  if (engine === 'duckdb') return runChild(job);
  const database = `gw_bench_compare_${process.pid}_${++databases}`;
  await admin(`CREATE DATABASE ${database}`);
  try {
    const url = new URL(PG_URL);
    url.pathname = `/${database}`;
    return await runChild({ ...job, databaseUrl: url.toString() });
  } finally {
    await admin(`DROP DATABASE ${database} WITH (FORCE)`);
  }
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const micro = (n: number) => n.toFixed(1);
const label = (side: Side) => (side === 'A' ? short : 'working tree');
const unit = (kind: Kind) => (kind === 'logs' ? 'records/s' : 'spans/s');

function runLine(round: number, kind: Kind, side: Side, r: Extract<RunResult, { served: true }>): string {
  const stored =
    r.stored === null
      ? 'stored not counted'
      : r.stored === r.accepted
        ? 'stored = accepted'
        : `stored ${int(r.stored)}: DIFFERENT`;
  const failed =
    r.failures === 0
      ? '0 failed'
      : `${r.failures} failed; statuses ${Object.entries(r.statuses)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')}`;
  return `  round ${round}  ${kind.padEnd(8)} ${side} ${label(side).padEnd(12)} ${int(r.accepted / r.elapsedS).padStart(7)} ${unit(kind).padEnd(9)}  server CPU ${micro((r.serverCpuMs * 1000) / Math.max(1, r.accepted)).padStart(5)} µs each, senders ${micro((r.senderCpuMs * 1000) / Math.max(1, r.accepted))} µs  (${r.requests} requests, ${failed}; ${stored}${r.healthy ? '' : '; UNHEALTHY after the run'})`;
}

function summaryLine(kind: Kind, c: Comparison, show: (n: number) => string): string {
  const side = (s: typeof c.a) => `${show(s.median).padStart(7)} (${show(s.min)}–${show(s.max)})`.padEnd(26);
  const rounds = c.rounds === null ? '' : ` (rounds ${c.rounds.min.toFixed(2)}–${c.rounds.max.toFixed(2)})`;
  return `  ${kind.padEnd(8)}  A ${side(c.a)} B ${side(c.b)} B/A ${c.ratio.toFixed(2)}${rounds}  ${verdict(c)}`;
}

const { dir, modules, remove } = await checkout();
const stop = () => {
  running?.kill('SIGTERM');
  remove();
  process.exit(130);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
try {
  const where =
    engine === 'postgres'
      ? 'PostgreSQL: two replicas of a side into one fresh database per run'
      : 'embedded default (DuckDB): one service';
  console.log(
    `OTLP ingestion interleaved: A = ${short} (a worktree; node_modules: ${modules}), B = the working tree (HEAD ${head}${modified ? ' with uncommitted changes' : ''}); ${where}`,
  );
  console.log(
    `${rounds} round${rounds === 1 ? '' : 's'} of ${kinds.join(', ')}, sides in A B, B A, … order; ${seconds}s per run, ${connections} senders in a worker thread, ${BATCH} spans or records per request; every run its own process on a fresh service`,
  );
  const results = new Map<Kind, Record<Side, Extract<RunResult, { served: true }>[]>>();
  const unserved = new Map<Kind, string>();
  for (const { round, kind, side } of schedule(rounds, kinds)) {
    if (unserved.has(kind)) continue;
    const r = await measure(side === 'A' ? dir : ROOT, kind);
    if (!r.served) {
      unserved.set(kind, `not compared: ${side} (${label(side)}) has ${r.reason}`);
      continue;
    }
    console.log(runLine(round, kind, side, r));
    const entry = results.get(kind) ?? { A: [], B: [] };
    entry[side].push(r);
    results.set(kind, entry);
  }
  const table = (
    title: string,
    value: (r: Extract<RunResult, { served: true }>) => number,
    show: (n: number) => string,
  ) => {
    console.log(title);
    for (const kind of kinds) {
      const entry = results.get(kind);
      const reason = unserved.get(kind);
      if (reason !== undefined || entry === undefined) console.log(`  ${kind.padEnd(8)}  ${reason ?? 'no run'}`);
      else console.log(summaryLine(kind, compare(entry.A.map(value), entry.B.map(value)), show));
    }
  };
  table(
    `accepted spans/s (logs: records/s), median (min–max) of ${rounds} run${rounds === 1 ? '' : 's'} a side, ratio of the medians (and of each round's pair):`,
    (r) => r.accepted / r.elapsedS,
    int,
  );
  table(
    `server CPU per accepted span or record, µs: the run's process less its senders' threads${engine === 'postgres' ? ", PostgreSQL's processes not included" : ''}:`,
    (r) => (r.serverCpuMs * 1000) / Math.max(1, r.accepted),
    micro,
  );
} finally {
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  remove();
}
