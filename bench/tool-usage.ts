/**
 * The tool aggregate (operation 3) with trace metrics on N spans (default 10 million) in the
 * embedded DuckDB store, through the real app: the demo org's tools grouped by server, with
 * `calls`, `error_rate`, `p95_latency_ms` and `last_called_at` over the last 30 days, against the
 * same aggregate without trace metrics (registry only), in the same run. The response cache is off,
 * so both pay the whole path (trace answers are never cached anyway). Prints both medians, their
 * ratio, and the trace store's own share (the toolUsage query alone, same tools, same range).
 * Usage: npm run bench:tool-usage [-- --spans 10000000 --runs 30]. The generated store is kept in
 * $TMPDIR/gw-bench-tool-usage-N-v2.duckdb and reused by later runs (bench/trace-bench.ts).
 */
import { toolNameOf } from '../src/tools/tool-usage.ts';
import { argNumber } from './harness.ts';
import { median, traceBenchApp } from './trace-bench.ts';

const N = argNumber('spans', 10_000_000);
const RUNS = argNumber('runs', 30);
const END = Math.floor(Date.UTC(2026, 10, 1) / 1000);
const SINCE = END - 30 * 86400;

const { app, registry, traces, token, close } = await traceBenchApp({
  name: 'tool-usage',
  spans: N,
  endS: END,
  days: 90,
  env: { RESPONSE_CACHE_ENTRIES: '0', RATE_LIMIT_PER_MIN: '100000000' },
});

const withCalls = {
  group_by: ['server_id'],
  metrics: ['count', 'calls', 'error_rate', 'p95_latency_ms', 'last_called_at'],
  since_unix_seconds: SINCE,
};
const withoutCalls = { group_by: ['server_id'], metrics: ['count', 'servers', 'latest_updated_at'] };

async function aggregate(body: object): Promise<{ ms: number; json: { groups: { metrics: { calls?: number } }[] } }> {
  const t0 = performance.now();
  const res = await app.inject({
    method: 'POST',
    url: '/mcp/v1/tools/aggregate',
    headers: { authorization: `Bearer ${token}` },
    payload: body,
  });
  const ms = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`aggregate answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  return { ms, json: res.json() };
}

// The trace store's part alone: the tool refs of the org as the handler looks them up.
const workspaceIds = (await registry.listOrgWorkspaces('org-acme')).map((w) => w.id);
const tools = await registry.listArtifacts(workspaceIds, 'tool');
const servers = [...new Set(tools.map((t) => t.server_id ?? null))];
const usageQuery = {
  orgId: 'org-acme',
  workspaceIds,
  sinceS: SINCE,
  tools: tools.map((t) => ({
    group: servers.indexOf(t.server_id ?? null),
    tool: toolNameOf(t),
    server: t.server_id ?? null,
  })),
};
async function storeOnly(): Promise<number> {
  const t0 = performance.now();
  await traces.toolUsage(usageQuery);
  return performance.now() - t0;
}

for (let i = 0; i < 3; i++) {
  await aggregate(withCalls);
  await aggregate(withoutCalls);
  await storeOnly();
}
const a: number[] = [];
const b: number[] = [];
const s: number[] = [];
for (let i = 0; i < RUNS; i++) {
  a.push((await aggregate(withCalls)).ms);
  b.push((await aggregate(withoutCalls)).ms);
  s.push(await storeOnly());
}
const sample = (await aggregate(withCalls)).json.groups;
const calls = sample.reduce((n, g) => n + (g.metrics.calls ?? 0), 0);
console.log(
  `tool aggregate benchmark: ${(await traces.countSpans()).toLocaleString()} spans, ${tools.length} tools of org-acme by server_id, ${RUNS} runs, response cache off`,
);
console.log(`  groups ${sample.length}, tool calls counted over 30 days ${calls.toLocaleString()}`);
console.log(`  aggregate without trace metrics   median ${median(b).toFixed(1)} ms`);
console.log(`  aggregate with calls, error_rate, p95_latency_ms, last_called_at   median ${median(a).toFixed(1)} ms`);
console.log(`  ratio ${(median(a) / median(b)).toFixed(2)}`);
console.log(`  trace store toolUsage alone   median ${median(s).toFixed(1)} ms`);
await close();
