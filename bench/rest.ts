/**
 * REST throughput against a bare Fastify route serving the same bytes from memory, same run,
 * same connections: `GET /mcp/v1/tools?limit=50` and `POST /agent/v1/agents/search` (a query,
 * 20 results). Target: ratio >= 0.5. Usage: npm run bench:rest [-- --seconds 10 --connections 10]
 */
import Fastify from 'fastify';
import { argNumber, fmt, load, startDemoApp } from './harness.ts';

const seconds = argNumber('seconds', 10);
const connections = argNumber('connections', 10);

const demo = await startDemoApp();
// The same service with its response cache off: every request pays auth, store and serialization.
const cold = await startDemoApp({ env: { RESPONSE_CACHE_ENTRIES: '0' } });
const coldAuth = { authorization: `Bearer ${cold.token}` };
const auth = { authorization: `Bearer ${demo.token}` };
const searchBody = JSON.stringify({ query: 'invoice', limit: 20 });

async function fetchBytes(path: string, init: RequestInit = {}): Promise<{ body: string; count: number }> {
  const res = await fetch(`${demo.url}${path}`, { ...init, headers: { ...auth, 'content-type': 'application/json' } });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  const body = await res.text();
  return { body, count: (JSON.parse(body) as { items: unknown[] }).items.length };
}

const tools = await fetchBytes('/mcp/v1/tools?limit=50');
const search = await fetchBytes('/agent/v1/agents/search', { method: 'POST', body: searchBody });

// The baseline: the same bytes from memory, no auth, no store.
const bare = Fastify({ logger: false });
bare.get('/tools', async (_req, reply) => reply.type('application/json').send(tools.body));
bare.post('/search', async (_req, reply) => reply.type('application/json').send(search.body));
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

console.log(`REST benchmark: ${seconds}s per run, ${connections} connections, demo data`);
console.log(
  `tool list: ${tools.count} items, ${tools.body.length} bytes; search: ${search.count} items, ${search.body.length} bytes\n`,
);

type Target = Parameters<typeof load>[0];
const rows: [string, Target, Target, Target][] = [
  [
    'GET /mcp/v1/tools?limit=50',
    { url: `${demo.url}/mcp/v1/tools?limit=50`, headers: auth },
    { url: `${bareUrl}/tools` },
    { url: `${cold.url}/mcp/v1/tools?limit=50`, headers: coldAuth },
  ],
  [
    'POST /agent/v1/agents/search',
    {
      url: `${demo.url}/agent/v1/agents/search`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: searchBody,
    },
    { url: `${bareUrl}/search`, method: 'POST', headers: { 'content-type': 'application/json' }, body: searchBody },
    {
      url: `${cold.url}/agent/v1/agents/search`,
      method: 'POST',
      headers: { ...coldAuth, 'content-type': 'application/json' },
      body: searchBody,
    },
  ],
];

let worst = Infinity;
for (const [name, project, baseline, uncached] of rows) {
  const b = await load({ ...baseline, seconds, connections });
  const p = await load({ ...project, seconds, connections });
  const u = await load({ ...uncached, seconds, connections });
  const ratio = p.rps / b.rps;
  worst = Math.min(worst, ratio);
  console.log(name);
  console.log(`  baseline (bare route, same bytes) ${fmt(b)}`);
  console.log(`  gateway                           ${fmt(p)}`);
  console.log(`  gateway, response cache off       ${fmt(u)}  (ratio ${(u.rps / b.rps).toFixed(2)}, informational)`);
  console.log(`  ratio ${ratio.toFixed(2)} (target >= 0.5)\n`);
}
console.log(`worst ratio ${worst.toFixed(2)}: ${worst >= 0.5 ? 'target met' : 'below target'}`);

await bare.close();
await demo.close();
await cold.close();
