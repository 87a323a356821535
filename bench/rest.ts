/**
 * Read throughput against a bare Fastify route serving the same bytes from memory, same run, same
 * connections, the load generator in a worker thread: for each read, the bare route, the gateway
 * as it runs (response cache on) and the gateway with its cache off (every request pays auth, the
 * store, presentation and serialization). Reads: `GET /mcp/v1/tools?limit=50`,
 * `POST /agent/v1/agents/search` (a query, 20 results), the MCP Registry list `GET /v0.1/servers?limit=100`
 * (not cached: its answers carry usage from the trace store; 100 servers published for it if the
 * demo holds fewer), the GraphQL `agentSearch(first: 50)` with
 * workspace, creator, used tools and relationship ends, a GraphQL query of one agent by id
 * (GraphQL has no response cache: both gateway columns do the full work), and, for reference,
 * GraphQL `{ __typename }`, which reads no store: what a GraphQL request costs before any store work.
 * Targets (the read-speed goals of docs/architecture.md): cache off >= 0.3 for REST and the one-agent query, >= 0.1 for the nested
 * query, and on PostgreSQL >= 0.2 for REST; cache on >= 0.7 for REST. Printed, not enforced.
 * Each run also prints the server thread's CPU per request (harness.ts; on PostgreSQL without the
 * database's own), and floors that bound what one event loop can answer, hence the ratio, however
 * the rest is built: on SQLite the time inside the registry's statements during the uncached run
 * (with the current statements), and for GraphQL reads graphql-js alone over the same answer
 * (graphql-floor.ts). The bounds divide by the bare route's rate measured minutes earlier in the
 * same run: on a noisy machine, read them with the CPU figures.
 * Usage: npm run bench:rest [-- --seconds 10 --connections 10 --engine sqlite|postgres --only GraphQL]
 * (`postgres`: a fresh database on DATABASE_URL_TEST or the local server, dropped afterwards).
 */
import Fastify from 'fastify';
import pg from 'pg';
import { argNumber, fmt, inWorker, load, startDemoApp, type BenchApp, type LoadResult } from './harness.ts';
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
  const res = await fetch(`${app.url}/v0.1/servers?limit=100`, { headers: { authorization: `Bearer ${app.token}` } });
  const have = ((await res.json()) as { metadata: { count: number } }).metadata.count;
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
const ALL_READS: Read[] = [
  { name: 'GET /mcp/v1/tools?limit=50', method: 'GET', path: '/mcp/v1/tools?limit=50', off: REST_OFF, on: 0.7 },
  {
    name: 'POST /agent/v1/agents/search (query, 20 results)',
    method: 'POST',
    path: '/agent/v1/agents/search',
    body: JSON.stringify({ query: 'invoice', limit: 20 }),
    off: REST_OFF,
    on: 0.7,
  },
  // Not cached (each answer carries usage from the trace store): both gateway columns do the full work.
  { name: 'GET /v0.1/servers?limit=100', method: 'GET', path: '/v0.1/servers?limit=100', off: REST_OFF },
  graphqlRead('GraphQL agentSearch(first: 50) nested', NESTED, 0.1),
  graphqlRead('GraphQL agent(id) one agent', ONE, 0.3),
  // No store work at all: what authentication, Fastify and Apollo cost a GraphQL request today.
  graphqlRead('GraphQL { __typename } (reference: no store work)', '{ __typename }'),
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
 * SQLite only: sums the time spent inside the uncached gateway's registry statements (its one
 * `all`, where every statement runs synchronously on the event loop) until `stop`, which answers
 * the milliseconds and puts the store's own method back.
 */
function timeStatements(): { stop: () => number } {
  const store = cold.registry as unknown as Record<string, unknown>;
  const all = store.all;
  if (typeof all !== 'function') throw new Error('the SQLite registry store no longer runs statements through all()');
  const own = Object.getOwnPropertyDescriptor(store, 'all');
  let spent = 0;
  store.all = (...args: unknown[]): unknown => {
    const start = performance.now();
    try {
      return (all as (...a: unknown[]) => unknown).apply(cold.registry, args);
    } finally {
      spent += performance.now() - start;
    }
  };
  return {
    stop: () => {
      if (own === undefined) delete store.all;
      else Object.defineProperty(store, 'all', own);
      return spent;
    },
  };
}

console.log(
  `read benchmark: ${engine}, demo data, ${seconds}s per run, ${connections} connections, load generator in a worker thread`,
);
for (const line of sizes) console.log(`  ${line}`);
console.log('');

const verdict = (ratio: number, target: number) =>
  `${ratio.toFixed(2)} (target >= ${target}: ${ratio >= target ? 'met' : 'missed'})`;
let missed = 0;
for (const [i, read] of READS.entries()) {
  const at = (base: string, token?: string) => ({
    url: `${base}${token === undefined ? `/read-${i}` : read.path}`,
    method: read.method,
    headers: token === undefined ? json : { authorization: `Bearer ${token}`, ...json },
    ...(read.body !== undefined ? { body: read.body } : {}),
    seconds,
    connections,
  });
  const b: LoadResult = await load(at(bareUrl));
  const on = await load(at(demo.url, demo.token));
  // Statements are timed during the uncached run itself, so their share is of the same requests.
  const statements = engine === 'sqlite' && read.off !== undefined ? timeStatements() : undefined;
  const off = await load(at(cold.url, cold.token));
  const statementMs = statements === undefined ? undefined : statements.stop() / Math.max(1, off.requests);
  console.log(read.name);
  console.log(`  baseline (bare route, same bytes) ${fmt(b)}`);
  const onRatio = on.rps / b.rps;
  const offRatio = off.rps / b.rps;
  console.log(
    `  gateway, response cache on        ${fmt(on)}  ratio ${read.on === undefined ? `${onRatio.toFixed(2)} (not cached)` : verdict(onRatio, read.on)}`,
  );
  const offVerdict =
    read.off === undefined ? `${offRatio.toFixed(2)} (reference, no target)` : verdict(offRatio, read.off);
  console.log(`  gateway, response cache off       ${fmt(off)}  ratio ${offVerdict}`);
  // Each floor is work one event loop does for every request: 1000 / floor bounds its req/s.
  const bound = (ms: number) =>
    `at most ${(1000 / ms).toFixed(0)} req/s, ratio at most ${(1000 / ms / b.rps).toFixed(2)}`;
  if (statementMs !== undefined)
    console.log(
      `  SQLite statements in that run      ${statementMs.toFixed(3)} ms per request, ${((100 * statementMs) / off.cpuMs).toFixed(0)} % of its server CPU: alone they allow ${bound(statementMs)}`,
    );
  const floorMs = executorFloor.get(read);
  if (floorMs !== undefined) {
    console.log(
      `  graphql-js alone over this answer  ${floorMs.toFixed(3)} ms CPU per request (no store, no HTTP): alone it allows ${bound(floorMs)}`,
    );
    if (statementMs !== undefined)
      console.log(
        `  both (separate work, so added)     ${(statementMs + floorMs).toFixed(3)} ms: ${bound(statementMs + floorMs)}`,
      );
  }
  console.log('');
  if ((read.off !== undefined && offRatio < read.off) || (read.on !== undefined && onRatio < read.on)) missed++;
}
const targeted = READS.filter((r) => r.off !== undefined).length;
console.log(missed === 0 ? 'every target met' : `${missed} of ${targeted} reads below a target`);

await bare.close();
await demo.close();
await cold.close();
if (engine === 'postgres') await admin(`DROP DATABASE ${database} WITH (FORCE)`);
