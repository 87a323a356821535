/**
 * Load test: 200 concurrent connections for 60 s over a mix of every REST operation on the demo
 * data, through the real authenticator. Prints throughput, p50/p99 latency and the count of
 * responses by status; any 5xx other than deliberate shedding (503 service_overloaded) fails it.
 * The load generator runs in a worker thread (harness.ts `autocannonInWorker`).
 * Usage: npm run bench:load [-- --seconds 60 --connections 200]
 */
import type autocannon from 'autocannon';
import { argNumber, autocannonInWorker, startDemoApp } from './harness.ts';

const seconds = argNumber('seconds', 60);
const connections = argNumber('connections', 200);
const demo = await startDemoApp();
const json = { authorization: `Bearer ${demo.token}`, 'content-type': 'application/json' };
const get = { authorization: `Bearer ${demo.token}` };

const mix: autocannon.Request[] = [
  { method: 'GET', path: '/mcp/v1/tools?limit=50', headers: get },
  {
    method: 'POST',
    path: '/agent/v1/agents/search',
    headers: json,
    body: JSON.stringify({ query: 'invoice', limit: 20 }),
  },
  {
    method: 'POST',
    path: '/agent/v1/agents/search',
    headers: json,
    body: JSON.stringify({ query: 'data', strategy: 'prefix' }),
  },
  { method: 'POST', path: '/mcp/v1/tools/aggregate', headers: json, body: JSON.stringify({ group_by: ['server_id'] }) },
  { method: 'GET', path: '/skill/v1/insights/schemas', headers: get },
  { method: 'GET', path: '/registry/v1/workspaces/ws-acme/export', headers: get },
  { method: 'GET', path: '/registry/v1/users?limit=20', headers: get },
  { method: 'GET', path: '/agent/v1/agents/agent-0001/profile-image', headers: get },
  { method: 'POST', path: '/agent/v1/agents/search', headers: json, body: '{"limit": "bad"}' },
];

console.log(`load: ${connections} connections for ${seconds}s over ${mix.length} request kinds`);
const result = await autocannonInWorker({ url: demo.url, connections, duration: seconds, requests: mix });
const byStatus = Object.entries(result.statusCodeStats ?? {}).map(
  ([code, s]) => `${code}: ${(s as { count: number }).count}`,
);
console.log(`throughput ${result.requests.average.toFixed(0)} req/s (${result.requests.total} requests)`);
console.log(`latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`);
console.log(`responses by status: ${byStatus.join(', ')}; socket errors ${result.errors}, timeouts ${result.timeouts}`);
const fiveXX = Object.entries(result.statusCodeStats ?? {})
  .filter(([code]) => code.startsWith('5') && code !== '503')
  .reduce((n, [, s]) => n + (s as { count: number }).count, 0);
console.log(fiveXX === 0 ? 'no 5xx besides shedding' : `FAIL: ${fiveXX} responses with 5xx other than 503`);
await demo.close();
process.exitCode = fiveXX === 0 ? 0 : 1;
