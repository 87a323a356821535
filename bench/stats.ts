/**
 * Trace statistics on N spans (default 10 million) in the embedded DuckDB store, as the service
 * runs it (its own thread, everything sealed): a per-skill 30-day time_series with traces, tokens,
 * error_rate and latency_p99 grouped by model, through the real app, against the raw DuckDB SQL it
 * compiles to, run in the same engine thread, in the same run. Prints both medians and the ratio,
 * and the raw SQL again with the group rankings the endpoint asks for (top 100 by each measure).
 * Targets: median <= 150 ms, ratio <= 1.2.
 * Usage: npm run bench:stats [-- --spans 10000000 --runs 30]. The generated store is kept in
 * $TMPDIR/gw-bench-stats-N.duckdb and reused by later runs (bench/trace-bench.ts).
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
const skills = (await demoTraceOptions(registry, END, 90))?.skills ?? [];

const skill = skills[0] as { id: string };
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

async function endpoint(): Promise<number> {
  const t0 = performance.now();
  const res = await app.inject({
    method: 'POST',
    url: `/skill/v1/skills/${skill.id}/traces/stats/query`,
    headers: { authorization: `Bearer ${token}` },
    payload: body,
  });
  if (res.statusCode !== 200) throw new Error(`endpoint answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  return performance.now() - t0;
}
async function rawSql(sql = compiled): Promise<number> {
  const t0 = performance.now();
  await store.runCompiled(sql);
  return performance.now() - t0;
}

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
const sample = (
  await app.inject({
    method: 'POST',
    url: `/skill/v1/skills/${skill.id}/traces/stats/query`,
    headers: { authorization: `Bearer ${token}` },
    payload: body,
  })
).json();
console.log(
  `trace stats benchmark: ${(await store.countSpans()).toLocaleString()} spans, skill ${skill.id}, 30-day time_series x 4 measures by model, ${RUNS} runs`,
);
console.log(`  series ${sample.data.series.length}, points per series ${sample.data.series[0]?.points.length}`);
console.log(`  raw DuckDB SQL     median ${median(r).toFixed(1)} ms`);
console.log(`  raw SQL with top   median ${median(t).toFixed(1)} ms   (4 rankings, top 100 each)`);
console.log(
  `  endpoint (inject)  median ${median(e).toFixed(1)} ms   (target <= 150 ms: ${median(e) <= 150 ? 'met' : 'missed'})`,
);
console.log(`  ratio ${(median(e) / median(r)).toFixed(2)} (target <= 1.2)`);
await close();
