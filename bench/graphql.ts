/**
 * GraphQL benchmark, one run, same connections for each side:
 * 1. the 50-agent nested query (workspace, tools, creator, relationship ends) against the REST
 *    search returning the same 50 agents (with their relationships): throughput ratio, target >= 0.4;
 * 2. federation `_entities` with 1,000 Agent references: median latency, target < 50 ms, next to
 *    a one-agent by-id query measured the same way.
 * Data: the small fixture widened to 1,000 agents (test/fixtures/wide-bundle.ts) in a temp SQLite.
 * The response caches are off, so both sides do the full work of every request; 3. the nested
 * query once more on a second app over the same stores with the response cache on (every request
 * after the first a hit), its uncached figure printed beside it.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.ts';
import { createAuthenticator } from '../src/auth/authenticator.ts';
import { loadDevIssuer } from '../src/auth/dev-issuer.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { parseBundle } from '../src/bundle/parse.ts';
import { openRegistryStore } from '../src/store/open-registry.ts';
import { openTraceStore } from '../src/store/open-traces.ts';
import type { RegistryStore } from '../src/store/registry-port.ts';
import type { TraceStore } from '../src/store/trace-port.ts';
import { wideBundle } from '../test/fixtures/wide-bundle.ts';
import { load } from './harness.ts';

const CONNECTIONS = Number(process.argv[2] ?? 10);
const SECONDS = Number(process.argv[3] ?? 10);

const NESTED = `{ agentSearch(first: 50, sorts: [{ field: NAME }]) { nodes {
  id name kind artifactStatus workspaceId createdAt updatedAt
  workspace { id name } creator { id name } usedTools { id toolName }
  relationships { count outgoing { relType to { id name } } incoming { relType from { id name } } } } } }`;

async function median(times: number, run: () => Promise<void>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

/** Never closes what it wraps: the bench's own app closes the stores. */
function unclosable<T extends object>(store: T): T {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'close') return async () => {};
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `query` under load on a second app over the same stores, with the response cache on (its default bounds). */
async function loadCached(
  config: Config,
  registry: RegistryStore,
  traces: TraceStore,
  query: string,
): Promise<Awaited<ReturnType<typeof load>>> {
  const cachedConfig = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: config.dataDir,
    SEED_DEMO: 'false',
    RATE_LIMIT_PER_MIN: '100000000',
  });
  const shared = { config: cachedConfig, registry: unclosable(registry), traces: unclosable(traces) };
  const app = await buildApp({
    services: shared,
    authenticator: await createAuthenticator(cachedConfig, shared.registry),
    logger: false,
  });
  try {
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    const token = await (await loadDevIssuer(config.dataDir)).mint({ sub: 'u-admin', org: 'org-a', ttlSeconds: 3600 });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ query });
    const first = await fetch(`${origin}/graphql`, { method: 'POST', headers, body });
    await first.arrayBuffer();
    const again = await fetch(`${origin}/graphql`, { method: 'POST', headers, body });
    await again.arrayBuffer();
    if (again.headers.get('x-cache') !== 'hit') throw new Error('the nested query was not answered from the cache');
    return await load({
      url: `${origin}/graphql`,
      method: 'POST',
      headers,
      body,
      connections: CONNECTIONS,
      seconds: SECONDS,
    });
  } finally {
    await app.close();
  }
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gw-bench-graphql-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    SEED_DEMO: 'false',
    RATE_LIMIT_PER_MIN: '100000000',
    RESPONSE_CACHE_ENTRIES: '0',
  });
  const registry = await openRegistryStore(config);
  await registry.importBundle(parseBundle(wideBundle(1_000)));
  const authenticator = await createAuthenticator(config, registry);
  const traces = await openTraceStore(config);
  const app = await buildApp({ services: { config, registry, traces }, authenticator, logger: false });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  const token = await (await loadDevIssuer(dataDir)).mint({ sub: 'u-admin', org: 'org-a', ttlSeconds: 3600 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const post = (url: string, body: unknown) =>
    fetch(`${origin}${url}`, { method: 'POST', headers, body: JSON.stringify(body) });

  try {
    // Same agents on both sides, checked before measuring.
    const restItems = (
      (await (await post('/agent/v1/agents/search', { limit: 50, sorts: ['name'] })).json()) as {
        items: { id: string }[];
      }
    ).items;
    const gqlBody = (await (await post('/graphql', { query: NESTED })).json()) as {
      data: { agentSearch: { nodes: { id: string }[] } };
      errors?: unknown;
    };
    if (gqlBody.errors) throw new Error(`GraphQL query failed: ${JSON.stringify(gqlBody.errors)}`);
    const same =
      JSON.stringify(restItems.map((i) => i.id)) === JSON.stringify(gqlBody.data.agentSearch.nodes.map((n) => n.id));
    if (!same || restItems.length !== 50) throw new Error('REST and GraphQL did not return the same 50 agents');

    const rest = await load({
      url: `${origin}/agent/v1/agents/search`,
      method: 'POST',
      headers,
      body: JSON.stringify({ limit: 50, sorts: ['name'] }),
      connections: CONNECTIONS,
      seconds: SECONDS,
    });
    const graphql = await load({
      url: `${origin}/graphql`,
      method: 'POST',
      headers,
      body: JSON.stringify({ query: NESTED }),
      connections: CONNECTIONS,
      seconds: SECONDS,
    });

    const refs = Array.from({ length: 1_000 }, (_, i) => ({
      __typename: 'Agent',
      id: `ag-w${String(i).padStart(4, '0')}`,
    }));
    const entities = {
      query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Agent { id name workspaceId } } }',
      variables: { r: refs },
    };
    const check = (await (await post('/graphql', entities)).json()) as { data: { _entities: unknown[] } };
    if (check.data._entities.filter((e) => e !== null).length !== 1_000)
      throw new Error('_entities did not resolve 1,000 agents');
    const byId = { query: '{ agent(id: "ag-w0000") { id name workspaceId } }' };
    const entitiesMs = await median(60, async () => {
      await (await post('/graphql', entities)).arrayBuffer();
    });
    const byIdMs = await median(60, async () => {
      await (await post('/graphql', byId)).arrayBuffer();
    });

    const cached = await loadCached(config, registry, traces, NESTED);

    const ratio = graphql.rps / rest.rps;
    const out = process.stdout;
    out.write(
      `\nGraphQL benchmark (${CONNECTIONS} connections, ${SECONDS} s per side, SQLite, 1,000 agents, response caches off unless said)\n`,
    );
    out.write(
      `  REST  POST /agent/v1/agents/search limit 50     ${rest.rps.toFixed(0).padStart(6)} req/s  p50 ${rest.p50} ms  p99 ${rest.p99} ms  non-2xx ${rest.non2xx}\n`,
    );
    out.write(
      `  GraphQL agentSearch(first: 50) + 4 nested edges  ${graphql.rps.toFixed(0).padStart(6)} req/s  p50 ${graphql.p50} ms  p99 ${graphql.p99} ms  non-2xx ${graphql.non2xx}\n`,
    );
    out.write(
      `  throughput ratio GraphQL/REST: ${ratio.toFixed(2)} (target >= 0.40) ${ratio >= 0.4 ? 'PASS' : 'FAIL'}\n`,
    );
    out.write(
      `  GraphQL nested, response cache on              ${cached.rps.toFixed(0).padStart(6)} req/s  p50 ${cached.p50} ms  p99 ${cached.p99} ms  non-2xx ${cached.non2xx}  (${(cached.rps / graphql.rps).toFixed(1)}x the uncached ${graphql.rps.toFixed(0)} req/s)\n`,
    );
    out.write(
      `  _entities, 1,000 Agent references: median ${entitiesMs.toFixed(1)} ms (target < 50 ms) ${entitiesMs < 50 ? 'PASS' : 'FAIL'}\n`,
    );
    out.write(
      `  baseline agent(id), 1 agent:       median ${byIdMs.toFixed(1)} ms; 1,000 references cost ${(entitiesMs / byIdMs).toFixed(1)}x one lookup\n\n`,
    );
  } finally {
    await app.close(); // closes the stores and the authenticator too
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
