/**
 * The trace statistics aggregation on PostgreSQL against DuckDB, on the same generated spans, in
 * one run: the per-skill 30-day time_series (traces, tokens, error_rate, latency_p99 by model).
 * Prints both medians and the PostgreSQL/DuckDB ratio (PostgreSQL sums its rollups where the query's shape
 * allows, as the service does; its answer from every row is printed beside it), both again with the group rankings the
 * endpoint asks for (top 100 groups by each measure), the same query over 1, 7, 30 and 90 days, and
 * the bytes per span each engine keeps on disk (DuckDB: its file after a checkpoint, as the service
 * keeps it, sealed; PostgreSQL: tables and indexes of the trace schema). These are the figures of
 * the capacity model in docs/deployment.md.
 * Usage: npm run bench:stats:pg [-- --spans 500000 --runs 10] (DATABASE_URL_TEST or the local server)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { DuckDbTraceStore } from '../src/store/duckdb/trace-store.ts';
import { openPostgresTraces } from '../src/store/postgres/open.ts';
import type { AggregateQuery, TraceStore } from '../src/store/trace-port.ts';
import { demoSpans } from '../src/seed/demo-traces.ts';
import { argNumber } from './harness.ts';

const N = argNumber('spans', 500_000);
const RUNS = argNumber('runs', 10);
const URL = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
const END = Date.UTC(2026, 10, 1) / 1000;
const schema = `bench_${process.pid}`;
const skills = Array.from({ length: 13 }, (_, i) => ({ id: `skill-${i}`, workspaceId: `ws-${i % 4}` }));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-bench-stats-pg-'));
const duckFile = path.join(dir, 'traces.duckdb');

const duck = await DuckDbTraceStore.open(duckFile, { sealEveryMs: 0 });
// "Now" is the data's end: its months are partitioned whenever the benchmark runs.
const post = await openPostgresTraces({ databaseUrl: URL, requestTimeoutMs: 600_000 }, schema, {
  sealEveryMs: 0,
  now: () => END,
});
// The same schema read without the rollups (every query from rows), for comparison.
const rows = await openPostgresTraces({ databaseUrl: URL, requestTimeoutMs: 600_000 }, schema, {
  sealEveryMs: 0,
  rollups: false,
  now: () => END,
});
const admin = new pg.Client({ connectionString: URL });
await admin.connect();
try {
  let done = 0;
  const t0 = performance.now();
  for (const batch of demoSpans(
    { orgId: 'org', skills, users: ['u1', 'u2', 'u3'], spans: N, endS: END, days: 90 },
    20_000,
  )) {
    await Promise.all([duck.insertSpans(batch), post.insertSpans(batch)]);
    done += batch.length;
    const rate = Math.round(done / ((performance.now() - t0) / 1000));
    process.stderr.write(
      `\rloading ${done.toLocaleString()} / ${N.toLocaleString()} spans into both engines (${rate.toLocaleString()}/s)   `,
    );
  }
  process.stderr.write('\n');
  // As the service would have them seconds after ingestion: both sealed, PostgreSQL analyzed.
  // (The service seals every few seconds, so a step holds seconds of spans, not all of them.)
  const sealT0 = performance.now();
  await duck.seal();
  const duckSealMs = performance.now() - sealT0;
  const pgSealT0 = performance.now();
  await post.seal();
  const pgSealMs = performance.now() - pgSealT0;
  process.stderr.write(
    `sealed after loading: DuckDB ${(duckSealMs / 1000).toFixed(1)} s, PostgreSQL ${(pgSealMs / 1000).toFixed(1)} s\n`,
  );
  await duck.withConnection((conn) => conn.run('CHECKPOINT'));
  // VACUUM: what autovacuum does within a minute with the tables' settings (migration 004), so the
  // rollups and invocations are read from their indexes alone.
  // One statement each: VACUUM cannot run in the transaction of a multi-statement string.
  for (const table of ['spans', 'trace_skills']) await admin.query(`ANALYZE ${schema}.${table}`);
  for (const table of ['skill_spans', 'skill_rollup', 'skill_special'])
    await admin.query(`VACUUM ANALYZE ${schema}.${table}`);

  const query: AggregateQuery = {
    orgId: 'org',
    subject: { skill: 'skill-0' },
    startS: END - 30 * 86400,
    endS: END,
    workspaceIds: ['ws-0', 'ws-1', 'ws-2', 'ws-3'],
    filters: [],
    groupBy: ['model'],
    measures: ['traces', 'tokens', 'error_rate', 'latency_p99'],
    bucket: 'day',
  };
  const ranked: AggregateQuery = {
    ...query,
    top: query.measures.map((by) => ({ by, direction: 'desc' as const, limit: 100 })),
  };
  async function median(store: TraceStore, q = query): Promise<number> {
    await store.aggregate(q);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      await store.aggregate(q);
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;
  }
  const d = await median(duck);
  const p = await median(post);
  const pr = await median(rows);
  console.log(`stats aggregation, ${N.toLocaleString()} spans, 30-day time_series x 4 measures by model, ${RUNS} runs`);
  console.log(`  DuckDB      median ${d.toFixed(1)} ms`);
  console.log(`  PostgreSQL  median ${p.toFixed(1)} ms (summed from the rollups)`);
  console.log(`  ratio PostgreSQL/DuckDB ${(p / d).toFixed(1)}`);
  console.log(`  PostgreSQL from every row (rollups off) median ${pr.toFixed(1)} ms`);
  const dt = await median(duck, ranked);
  const pt = await median(post, ranked);
  console.log(
    `  with top (4 rankings, top 100 each): DuckDB median ${dt.toFixed(1)} ms, PostgreSQL median ${pt.toFixed(1)} ms`,
  );
  console.log('  by range (same query, bucket day):');
  for (const days of [1, 7, 30, 90]) {
    const q = { ...query, startS: END - days * 86400 };
    const dr = await median(duck, q);
    const pr = await median(post, q);
    console.log(
      `    ${String(days).padStart(2)} days: DuckDB ${dr.toFixed(1)} ms, PostgreSQL ${pr.toFixed(1)} ms, ratio ${(pr / dr).toFixed(1)}`,
    );
  }
  const pgBytes = await admin.query<{ b: string }>(
    `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint AS b FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [schema],
  );
  await duck.close();
  const duckBytes = fs.readdirSync(dir).reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
  const perSpan = (b: number) => `${(b / N).toFixed(0)} bytes/span (${(b / 2 ** 20).toFixed(0)} MiB)`;
  console.log(`  on disk: DuckDB ${perSpan(duckBytes)}, PostgreSQL ${perSpan(Number(pgBytes.rows[0]?.b ?? 0))}`);
} finally {
  // Closing twice is harmless: the try closed DuckDB to measure its file, unless it failed first.
  await duck.close();
  await post.close();
  await rows.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
  fs.rmSync(dir, { recursive: true, force: true });
}
