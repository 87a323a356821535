/**
 * Read throughput against a bare Fastify route serving the same bytes from memory, same run, same
 * connections, the load generator in a worker thread: for each read, the bare route, the gateway
 * as it runs (response cache on) and the gateway with its cache off (every request pays auth, the
 * store, presentation and serialization). Reads: `GET /mcp/v1/tools?limit=50`,
 * `POST /agent/v1/agents/search` (a query, 20 results), the MCP Registry list `GET /v0.1/servers?limit=100`
 * (not cached: its answers carry usage from the trace store; 100 servers published for it if the
 * demo holds fewer), the GraphQL `agentSearch(first: 50)` with workspace, creator, used tools and
 * relationship ends, a GraphQL query of one agent by id, and, for reference, GraphQL
 * `{ __typename }`, which reads no store: what a GraphQL request costs before any store work.
 * On SQLite each REST read also runs against its peer (rest-peer.ts): a hand-written route over
 * the same file, one statement, the stored documents, no authorization or relationships.
 * Targets (the read-speed goals of docs/architecture.md): cache off >= 0.3 for REST and the
 * one-agent query, >= 0.1 for the nested query, and on PostgreSQL >= 0.2 for REST; cache on >= 0.7
 * for REST and >= 0.5 for the nested query; REST cache off >= 0.5 of its peer; cache off, the
 * nested query's server CPU within 1.5x of its floors, the one-agent query's within 1.5x of
 * `{ __typename }`'s plus its floors. Printed, not enforced.
 * Each run also prints the server thread's CPU per request (harness.ts; on PostgreSQL without the
 * database's own), and floors that bound what one event loop can answer, hence the ratio, however
 * the rest is built: on SQLite the CPU of the registry's statements of the uncached run (recorded,
 * then replayed alone; their wall time in the run beside it), and for GraphQL reads graphql-js
 * alone over the same answer (graphql-floor.ts). The bounds divide by the bare route's rate
 * measured minutes earlier in the same run: on a noisy machine, read them with the CPU figures.
 * Usage: npm run bench:rest [-- --seconds 10 --connections 10 --engine sqlite|postgres --only GraphQL]
 * (`postgres`: a fresh database on DATABASE_URL_TEST or the local server, dropped afterwards).
 */
import Fastify from 'fastify';
import path from 'node:path';
import pg from 'pg';
import { argNumber, fmt, inWorker, load, startDemoApp, type BenchApp, type LoadResult } from './harness.ts';
import { startPeer } from './rest-peer.ts';
import { publishVersions, serverJson } from '../test/fixtures/mcp-registry/servers.ts';

const seconds = argNumber('seconds', 10);
const connections = argNumber('connections', 10);
const engineArg = process.argv.indexOf('--engine');
const engine = engineArg < 0 ? 'sqlite' : process.argv[engineArg + 1];
if (engine !== 'sqlite' && engine !== 'postgres') throw new Error('--engine is sqlite or postgres');

const PG_URL = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
const database = `gw_bench_rest_${process.pid}`;
async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
let env: Record<string, string> = {};
if (engine === 'postgres') {
  await admin(`CREATE DATABASE ${database}`);
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  env = { DATABASE_URL: url.toString() };
}

const demo = await startDemoApp({ env });
const cold = await startDemoApp({ env: { ...env, RESPONSE_CACHE_ENTRIES: '0' } });

/** A full page of the MCP Registry list: MCP servers published up to 100 in the demo's root workspace. */
async function fillMcpServers(app: BenchApp): Promise<void> {
  // Right after its start-up work the service may shed the first requests (503 with Retry-After).
  let res: Response;
  for (let attempt = 1; ; attempt++) {
    res = await fetch(`${app.url}/v0.1/servers?limit=100`, { headers: { authorization: `Bearer ${app.token}` } });
    if (res.status !== 503 || attempt === 5) break;
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
  }
  const body = (await res.json()) as { metadata?: { count: number } };
  if (body.metadata === undefined) throw new Error(`GET /v0.1/servers answered ${res.status}: ${JSON.stringify(body)}`);
  const have = body.metadata.count;
  const missing = Array.from({ length: 100 - have }, (_, i) => `io.github.bench/server-${String(i).padStart(3, '0')}`);
  await publishVersions(
    app.registry,
    missing.map((name, i) => ({
      id: `mcp-bench-${i}`,
      orgId: 'org-acme',
      workspaceId: 'ws-acme',
      name,
      version: '1.0.0',
      server: serverJson(name, '1.0.0', {
        packages: [
          {
            registryType: 'npm',
            identifier: `@bench/server-${i}`,
            version: '1.0.0',
            transport: { type: 'stdio' },
            environmentVariables: [{ name: 'API_KEY', isSecret: true, isRequired: true }],
          },
        ],
      }),
    })),
  );
}
await fillMcpServers(demo);
await fillMcpServers(cold);
const json = { 'content-type': 'application/json' };

interface Read {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** The targets of this read: cache off, and cache on (REST only); none for a reference read. */
  off?: number;
  on?: number;
  /** A GraphQL read's document (its body's query): its executor floor is printed beside it (graphql-floor.ts). */
  graphql?: string;
  /** The peer's route for the same page (rest-peer.ts; SQLite only), and its body when it has one. */
  peer?: { path: string; body?: string };
}

/** A GraphQL read of `query`; with a target, its executor floor is measured too. */
function graphqlRead(name: string, query: string, off?: number): Read {
  const read: Read = { name, method: 'POST', path: '/graphql', body: JSON.stringify({ query }) };
  return off === undefined ? read : { ...read, off, graphql: query };
}
const REST_OFF = engine === 'postgres' ? 0.2 : 0.3;
const NESTED = `{ agentSearch(first: 50, sorts: [{ field: NAME }]) { nodes { id name kind workspace { id name }
  creator { id name } usedTools { id toolName } relationships { count outgoing { relType to { id name } }
  incoming { relType from { id name } } } } } }`;
const ONE = '{ agent(id: "agent-0001") { id name displayName instructions modelId workspace { id name } } }';
const NESTED_NAME = 'GraphQL agentSearch(first: 50) nested';
const ONE_NAME = 'GraphQL agent(id) one agent';
const TYPENAME_NAME = 'GraphQL { __typename } (reference: no store work)';
const ALL_READS: Read[] = [
  {
    name: 'GET /mcp/v1/tools?limit=50',
    method: 'GET',
    path: '/mcp/v1/tools?limit=50',
    off: REST_OFF,
    on: 0.7,
    peer: { path: '/tools?limit=50' },
  },
  {
    name: 'POST /agent/v1/agents/search (query, 20 results)',
    method: 'POST',
    path: '/agent/v1/agents/search',
    body: JSON.stringify({ query: 'invoice', limit: 20 }),
    off: REST_OFF,
    on: 0.7,
    peer: { path: '/agents/search', body: JSON.stringify({ query: 'invoice', limit: 20 }) },
  },
  // Not cached (each answer carries usage from the trace store): both gateway columns do the full work.
  {
    name: 'GET /v0.1/servers?limit=100',
    method: 'GET',
    path: '/v0.1/servers?limit=100',
    off: REST_OFF,
    peer: { path: '/servers?limit=100' },
  },
  { ...graphqlRead(NESTED_NAME, NESTED, 0.1), on: 0.5 },
  graphqlRead(ONE_NAME, ONE, 0.3),
  // No store work at all: what authentication, Fastify and Apollo cost a GraphQL request today.
  graphqlRead(TYPENAME_NAME, '{ __typename }'),
];
// `--only GraphQL` (any part of a read's name): just those reads, for a quicker before/after.
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg < 0 ? undefined : process.argv[onlyArg + 1];
const READS = ALL_READS.filter((r) => only === undefined || r.name.includes(only));
if (READS.length === 0) throw new Error(`--only ${only}: no read's name contains it`);

// The baseline: each read's bytes from memory on a bare route, no auth, no store.
const bare = Fastify({ logger: false });
const sizes: string[] = [];
const executorFloor = new Map<Read, number>();
for (const [i, read] of READS.entries()) {
  const res = await fetch(`${demo.url}${read.path}`, {
    method: read.method,
    headers: { authorization: `Bearer ${demo.token}`, ...json },
    ...(read.body !== undefined ? { body: read.body } : {}),
  });
  const body = await res.text();
  if (res.status !== 200 || body.includes('"errors"'))
    throw new Error(`${read.name} answered ${res.status}: ${body.slice(0, 300)}`);
  sizes.push(`${read.name}: ${body.length.toLocaleString()} bytes`);
  if (read.graphql !== undefined)
    executorFloor.set(
      read,
      await inWorker<number>(new URL('./graphql-floor.ts', import.meta.url), {
        query: read.graphql,
        answer: (JSON.parse(body) as { data: unknown }).data,
      }),
    );
  bare.route({
    method: read.method,
    url: `/read-${i}`,
    handler: async (_req, reply) => reply.type('application/json').send(body),
  });
}
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

/**
 * SQLite only: records the uncached gateway's registry statements (its `all` and `arrays`, where
 * every statement runs synchronously on the event loop) and the wall time spent in them until
 * `stop`. `stop` puts the store's own methods back and answers that wall time and the statements'
 * CPU: the recorded statements replayed alone on this thread, for at least half a second of CPU,
 * since a thread's CPU clock is too coarse to time one statement, and wall time on a busy machine
 * also holds the time the thread waited for a core. Both in milliseconds, for the whole run.
 */
function timeStatements(): { stop: () => { cpu: number; wall: number } } {
  const store = cold.registry as unknown as Record<string, unknown>;
  const runners = ['all', 'arrays'].map((name) => {
    const run = store[name] as (...a: unknown[]) => unknown;
    if (typeof run !== 'function')
      throw new Error(`the SQLite registry store no longer runs statements through ${name}()`);
    return { name, run, own: Object.getOwnPropertyDescriptor(store, name) };
  });
  let wall = 0;
  const calls: { run: (...a: unknown[]) => unknown; args: unknown[] }[] = [];
  for (const { name, run } of runners)
    store[name] = (...args: unknown[]): unknown => {
      const start = performance.now();
      try {
        return run.apply(cold.registry, args);
      } finally {
        wall += performance.now() - start;
        calls.push({ run, args });
      }
    };
  return {
    stop: () => {
      for (const { name, own } of runners)
        if (own === undefined) Reflect.deleteProperty(store, name);
        else Object.defineProperty(store, name, own);
      if (calls.length === 0) return { cpu: 0, wall };
      const start = process.threadCpuUsage();
      let replayed = 0;
      let cpu = 0;
      do {
        const call = calls[replayed % calls.length] as (typeof calls)[number];
        call.run.apply(cold.registry, call.args);
        replayed++;
        if (replayed % 64 === 0) {
          const used = process.threadCpuUsage(start);
          cpu = (used.user + used.system) / 1000;
        }
      } while (cpu < 500 || replayed < calls.length / 4);
      return { cpu: (cpu / replayed) * calls.length, wall };
    },
  };
}

const peer = engine === 'sqlite' ? await startPeer(path.join(cold.config.dataDir, 'registry.sqlite')) : undefined;

console.log(
  `read benchmark: ${engine}, demo data, ${seconds}s per run, ${connections} connections, load generator in a worker thread`,
);
for (const line of sizes) console.log(`  ${line}`);
console.log('');

const verdict = (ratio: number, target: number) =>
  `${ratio.toFixed(2)} (target >= ${target}: ${ratio >= target ? 'met' : 'missed'})`;
let missed = 0;
/** Per GraphQL read: its uncached server CPU per request and its floors (statements' CPU + graphql-js), for the summary. */
const cpuOf = new Map<string, { cpuMs: number; floorMs: number }>();
for (const [i, read] of READS.entries()) {
  const at = (base: string, token?: string, over?: { path: string; body?: string }) => ({
    url: `${base}${over !== undefined ? over.path : token === undefined ? `/read-${i}` : read.path}`,
    method: read.method,
    headers: token === undefined ? json : { authorization: `Bearer ${token}`, ...json },
    ...((over?.body ?? read.body) !== undefined ? { body: over?.body ?? read.body } : {}),
    seconds,
    connections,
  });
  const b: LoadResult = await load(at(bareUrl));
  const p = peer !== undefined && read.peer !== undefined ? await load(at(peer.url, undefined, read.peer)) : undefined;
  const on = await load(at(demo.url, demo.token));
  // Statements are timed during the uncached run itself, so their share is of the same requests.
  const statements = engine === 'sqlite' && read.off !== undefined ? timeStatements() : undefined;
  const off = await load(at(cold.url, cold.token));
  const spent = statements?.stop();
  const statementMs = spent === undefined ? undefined : spent.cpu / Math.max(1, off.requests);
  const statementWallMs = spent === undefined ? undefined : spent.wall / Math.max(1, off.requests);
  console.log(read.name);
  console.log(`  baseline (bare route, same bytes) ${fmt(b)}`);
  if (p !== undefined)
    console.log(`  peer (one statement, stored docs) ${fmt(p)}  ratio to bare ${(p.rps / b.rps).toFixed(2)}`);
  const onRatio = on.rps / b.rps;
  const offRatio = off.rps / b.rps;
  const notCached = read.name.includes('/v0.1/servers') ? 'not cached' : 'no target';
  console.log(
    `  gateway, response cache on        ${fmt(on)}  ratio ${read.on === undefined ? `${onRatio.toFixed(2)} (${notCached})` : verdict(onRatio, read.on)}`,
  );
  const offVerdict =
    read.off === undefined ? `${offRatio.toFixed(2)} (reference, no target)` : verdict(offRatio, read.off);
  console.log(`  gateway, response cache off       ${fmt(off)}  ratio ${offVerdict}`);
  // The peer target: the uncached gateway within 2x of the peer's req/s (and of its CPU per request).
  if (p !== undefined)
    console.log(
      `  gateway (cache off) / peer         ratio ${verdict(off.rps / p.rps, 0.5)}, CPU per request ${(off.cpuMs / p.cpuMs).toFixed(2)}x the peer's`,
    );
  // Each floor is work one event loop does for every request: 1000 / floor bounds its req/s.
  const bound = (ms: number) =>
    `at most ${(1000 / ms).toFixed(0)} req/s, ratio at most ${(1000 / ms / b.rps).toFixed(2)}`;
  if (statementMs !== undefined && statementWallMs !== undefined)
    console.log(
      `  SQLite statements in that run      ${statementMs.toFixed(3)} ms CPU per request replayed alone (${statementWallMs.toFixed(3)} ms wall in the run), ${((100 * statementMs) / off.cpuMs).toFixed(0)} % of its server CPU: alone they allow ${bound(statementMs)}`,
    );
  const floorMs = executorFloor.get(read);
  if (floorMs !== undefined) {
    console.log(
      `  graphql-js alone over this answer  ${floorMs.toFixed(3)} ms CPU per request (no store, no HTTP): alone it allows ${bound(floorMs)}`,
    );
    if (statementMs !== undefined) {
      console.log(
        `  both (separate work, so added)     ${(statementMs + floorMs).toFixed(3)} ms: ${bound(statementMs + floorMs)}`,
      );
      cpuOf.set(read.name, { cpuMs: off.cpuMs, floorMs: statementMs + floorMs });
    }
  }
  if (read.graphql === undefined && read.name.includes('__typename'))
    cpuOf.set(read.name, { cpuMs: off.cpuMs, floorMs: 0 });
  console.log('');
  if ((read.off !== undefined && offRatio < read.off) || (read.on !== undefined && onRatio < read.on)) missed++;
}
const targeted = READS.filter((r) => r.off !== undefined).length;
console.log(missed === 0 ? 'every target met' : `${missed} of ${targeted} reads below a target`);

// Reads near their floors (cache off, server CPU per request): the nested query within 1.5x of
// its floors, the one-agent query within 1.5x of `{ __typename }`'s CPU plus its floors.
const nested = cpuOf.get(NESTED_NAME);
const one = cpuOf.get(ONE_NAME);
const typename = cpuOf.get(TYPENAME_NAME);
const near = (what: string, cpuMs: number, boundMs: number) => {
  const x = cpuMs / boundMs;
  console.log(
    `${what}: ${cpuMs.toFixed(3)} ms CPU / ${boundMs.toFixed(3)} ms = ${x.toFixed(2)}x (target <= 1.5: ${x <= 1.5 ? 'met' : 'missed'})`,
  );
};
if (nested !== undefined)
  near('nested query, CPU over its floors (statements + graphql-js)', nested.cpuMs, nested.floorMs);
if (one !== undefined && typename !== undefined)
  near('one agent, CPU over { __typename } + its floors', one.cpuMs, typename.cpuMs + one.floorMs);

await bare.close();
await peer?.close();
await demo.close();
await cold.close();
if (engine === 'postgres') await admin(`DROP DATABASE ${database} WITH (FORCE)`);
