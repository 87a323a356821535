/**
 * Trace statistics on N spans (default 10 million) in the embedded DuckDB store, as the service
 * runs it (its own thread, everything sealed): a per-skill 30-day time_series with traces, tokens,
 * error_rate and latency_p99 grouped by model, through the real app, against the raw DuckDB SQL it
 * compiles to, run in the same engine thread, in the same run. Prints both medians and the ratio,
 * and the raw SQL again with the group rankings the endpoint asks for (top 100 by each measure).
 * Then the same body over an agent's traces (POST /agent/v1/agents/{id}/traces/stats/query)
 * against the SQL an engineer would write by hand over the same tables (spans semi-joined to the
 * agent's traces, one GROUP BY with the per-model totals), and both ratios side by side.
 * Targets: median <= 150 ms, ratios <= 1.2.
 * Usage: npm run bench:stats [-- --spans 10000000 --runs 30]. The generated store is kept in
 * $TMPDIR/gw-bench-stats-N-v3.duckdb and reused by later runs (bench/trace-bench.ts).
 */
import { demoTraceOptions } from '../src/seed/seed.ts';
import type { AggregateQuery } from '../src/store/trace-port.ts';
import { argNumber } from './harness.ts';
import { median, traceBenchApp } from './trace-bench.ts';

const N = argNumber('spans', 10_000_000);
const RUNS = argNumber('runs', 30);
const END = Date.UTC(2026, 10, 1) / 1000;

const {
  app,
  registry,
  traces: store,
  token,
  close,
} = await traceBenchApp({
  name: 'stats',
  spans: N,
  endS: END,
  days: 90,
});
const options = await demoTraceOptions(registry, END, 90);
const skill = options?.skills[0] as { id: string };
// The agent of the most traces: of the agents declaring the busiest skill (the first, demo-traces.ts),
// the first runs most of them.
const agent = options?.agents?.find((a) => a.skills.includes(skill.id))?.id as string;
const start = END - 30 * 86400;
const body = {
  start_time_unix_seconds: start,
  end_time_unix_seconds: END,
  request_type: 'time_series',
  queries: [
    { name: 'traces', measure: 'traces', group_by: ['model'] },
    { name: 'tokens', measure: 'tokens', group_by: ['model'] },
    { name: 'error_rate', measure: 'error_rate', group_by: ['model'] },
    { name: 'latency_p99', measure: 'latency_p99', group_by: ['model'] },
  ],
};
const access = await (
  await import('../src/auth/access.ts')
).loadAccess(registry, { kind: 'user', orgId: 'org-acme', userId: 'user-alice' });
const aggregate: AggregateQuery = {
  orgId: 'org-acme',
  subject: { skill: skill.id },
  startS: start,
  endS: END,
  workspaceIds: access.readableWorkspaceIds,
  filters: [],
  groupBy: ['model'],
  measures: ['traces', 'tokens', 'error_rate', 'latency_p99'],
  bucket: 'day',
};
const compiled = await store.compile(aggregate);
// What the endpoint asks the engine for this body: each query's top 100 groups by its measure.
const ranked = await store.compile({
  ...aggregate,
  top: aggregate.measures.map((by) => ({ by, direction: 'desc' as const, limit: 100 })),
});

/** The app's answer to `body` for `url`, timed. */
async function endpoint(url = `/skill/v1/skills/${skill.id}/traces/stats/query`): Promise<number> {
  const t0 = performance.now();
  const res = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: body });
  if (res.statusCode !== 200) throw new Error(`endpoint answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  return performance.now() - t0;
}
async function rawSql(sql = compiled): Promise<number> {
  const t0 = performance.now();
  await store.runCompiled(sql);
  return performance.now() - t0;
}

/**
 * The agent's statistics as an engineer writes them over the same tables: the spans of the range
 * and workspaces whose trace trace_agents maps to the agent (its dictionary code looked up inline),
 * per model and day, with each model's totals over the range (they rank the models); the model
 * left as its code.
 */
const workspaces = aggregate.workspaceIds;
const handWritten = {
  sql: `SELECT model, (start_s // 86400) * 86400 AS day, count(DISTINCT trace_key) AS traces, sum(tokens) AS tokens,
  avg(CASE WHEN is_error THEN 1.0 ELSE 0.0 END) FILTER (WHERE category = 'skill_invocation') AS error_rate,
  quantile_disc(duration_ms, 0.99) FILTER (WHERE category = 'skill_invocation') AS latency_p99
FROM spans
WHERE org_id = $1 AND start_s >= $2 AND start_s < $3 AND workspace_id IN (${workspaces.map((_, i) => `$${i + 5}`).join(', ')})
  AND trace_key IN (SELECT trace_key FROM trace_agents
    WHERE org_id = $1 AND agent = (SELECT id FROM dim_values WHERE value = $4))
GROUP BY GROUPING SETS ((model, day), (model))`,
  params: ['org-acme', start, END, agent, ...workspaces],
};
async function handSql(): Promise<number> {
  const t0 = performance.now();
  await store.runSelect(handWritten);
  return performance.now() - t0;
}
const agentUrl = `/agent/v1/agents/${agent}/traces/stats/query`;

// The skill's runs, then the agent's: each pair interleaved (endpoint and SQL see the same load),
// the two subjects apart (an agent's scans of `spans` would evict the skill's rows from the cache).
for (let i = 0; i < 3; i++) {
  await endpoint();
  await rawSql();
  await rawSql(ranked);
}
const e: number[] = [];
const r: number[] = [];
const t: number[] = [];
for (let i = 0; i < RUNS; i++) {
  r.push(await rawSql());
  t.push(await rawSql(ranked));
  e.push(await endpoint());
}
for (let i = 0; i < 3; i++) {
  await endpoint(agentUrl);
  await handSql();
}
const ae: number[] = [];
const ah: number[] = [];
for (let i = 0; i < RUNS; i++) {
  ah.push(await handSql());
  ae.push(await endpoint(agentUrl));
}
const sampleOf = async (url: string) =>
  (await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: body })).json();
const sample = await sampleOf(`/skill/v1/skills/${skill.id}/traces/stats/query`);
const agentSample = await sampleOf(agentUrl);
const totalTraces = (answer: { data: { series: { query_name: string; points: { value: number | null }[] }[] } }) =>
  answer.data.series
    .filter((x) => x.query_name === 'traces')
    .reduce((a, x) => a + x.points.reduce((b, p) => b + (p.value ?? 0), 0), 0);
console.log(
  `trace stats benchmark: ${(await store.countSpans()).toLocaleString()} spans, skill ${skill.id}, 30-day time_series x 4 measures by model, ${RUNS} runs`,
);
console.log(`  series ${sample.data.series.length}, points per series ${sample.data.series[0]?.points.length}`);
console.log(`  raw DuckDB SQL     median ${median(r).toFixed(1)} ms`);
console.log(`  raw SQL with top   median ${median(t).toFixed(1)} ms   (4 rankings, top 100 each)`);
console.log(
  `  endpoint (inject)  median ${median(e).toFixed(1)} ms   (target <= 150 ms: ${median(e) <= 150 ? 'met' : 'missed'})`,
);
console.log(
  `agent ${agent}: the same body over its traces (${totalTraces(agentSample).toLocaleString()} trace-days of ${totalTraces(sample).toLocaleString()} for the skill), ${agentSample.data.series.length} series`,
);
console.log(`  SQL by hand        median ${median(ah).toFixed(1)} ms`);
console.log(
  `  endpoint (inject)  median ${median(ae).toFixed(1)} ms   (target <= 150 ms: ${median(ae) <= 150 ? 'met' : 'missed'})`,
);
console.log(
  `  ratio skill ${(median(e) / median(r)).toFixed(2)}, agent ${(median(ae) / median(ah)).toFixed(2)} (target <= 1.2)`,
);
await close();
