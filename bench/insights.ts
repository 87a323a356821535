/**
 * Insight detection at scale: the labelled data set of test/fixtures/insight-anomalies.ts (normal
 * skills and skills with a planted latency regression, cost spike or tool failure hotspot, with
 * noise) at N spans (default 10 million) in two organizations, in the embedded DuckDB store in its
 * own thread (as the service runs it, sealed) or in PostgreSQL (`--engine postgres`, default
 * 1 million spans). Per organization: the time detection takes for `--steps` hourly steps (the
 * trace store's facts, then the rules), what it found against the plants (recall, false alarms),
 * and beside it the baseline: the same numbers asked of operation 1 (`aggregate`, three queries per
 * subject, workspace and window: the measures, cost by model, tool calls by tool; per-tool errors,
 * which operation 1 cannot answer, not even included), timed over `--baseline-steps` steps, and
 * the ratio of the two per step.
 * Usage: npm run bench:insights [-- --spans 10000000 --steps 36 --baseline-steps 2 --engine duckdb]
 * The DuckDB store is kept in $TMPDIR/gw-bench-insights-N-plantsHh-v1.duckdb and reused by later runs
 * with the same spans and plants (H: how many hours before the end the earliest plant starts, --steps - 2).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { stepWindows } from '../src/insights/detect.ts';
import { ThreadedTraceStore } from '../src/store/duckdb/threaded-store.ts';
import { openPostgresTraces } from '../src/store/postgres/open.ts';
import type { Measure, TraceStore } from '../src/store/trace-port.ts';
import { anomalySpans, detectSteps, plantsOf, score, type AnomalyOptions } from '../test/fixtures/insight-anomalies.ts';
import { argNumber } from './harness.ts';

const ENGINE = process.argv.includes('--engine') ? process.argv[process.argv.indexOf('--engine') + 1] : 'duckdb';
if (ENGINE !== 'duckdb' && ENGINE !== 'postgres') throw new Error('--engine is duckdb or postgres');
const N = argNumber('spans', ENGINE === 'duckdb' ? 10_000_000 : 1_000_000);
const STEPS = argNumber('steps', 36);
const BASELINE_STEPS = argNumber('baseline-steps', 2);
const END = Date.UTC(2026, 10, 1) / 1000;
const DAYS = 10;
const SKILLS = 120;
/** What the rules read of a subject's window, as operation 1 measures. */
const MEASURES: Measure[] = [
  'traces',
  'sessions',
  'active_users',
  'skill_invocations',
  'error_rate',
  'tokens',
  'cost',
  'latency_p50',
  'latency_p90',
  'latency_p99',
  'tokens_per_trace',
  'success_rate',
];
/** Spans per trace of the generator: an invocation, a model call, one or two tool calls. */
const SPANS_PER_TRACE = 3.5;

const orgs: AnomalyOptions[] = [1, 2].map((n) => ({
  orgId: `org-bench-${n}`,
  workspaces: [`ws-${n}-a`, `ws-${n}-b`, `ws-${n}-c`],
  normalSkills: SKILLS / 2,
  plantedSkills: SKILLS / 2,
  tracesPerDay: Math.max(1, Math.round(N / (2 * SKILLS * DAYS * SPANS_PER_TRACE))),
  days: DAYS,
  endS: END,
  plantHours: [STEPS - 2, 16],
  seed: 7000 + n,
}));

/** Both organizations' spans, interleaved by day so the store receives them in time order. */
async function load(store: TraceStore): Promise<number> {
  let done = 0;
  const t0 = performance.now();
  const generators = orgs.map((o) => anomalySpans(o, 100_000));
  for (let more = true; more;) {
    more = false;
    for (const g of generators) {
      const next = g.next();
      if (next.done === true) continue;
      more = true;
      await store.insertSpans(next.value);
      done += next.value.length;
      const rate = Math.round(done / ((performance.now() - t0) / 1000));
      process.stderr.write(`\rloading ${done.toLocaleString()} spans (${rate.toLocaleString()}/s)   `);
    }
  }
  process.stderr.write('\n');
  return done;
}

async function openDuckDb(): Promise<{ store: TraceStore; close: () => Promise<void> }> {
  // The plants' hours follow --steps: a store generated for other steps would be scored against plants it does not hold.
  const file = path.join(os.tmpdir(), `gw-bench-insights-${N}-plants${STEPS - 2}h-v1.duckdb`);
  const done = `${file}.done`;
  if (!fs.existsSync(done)) for (const f of [file, `${file}.wal`, done]) fs.rmSync(f, { force: true });
  const store = await ThreadedTraceStore.open(file);
  if (!fs.existsSync(done)) {
    await load(store);
    fs.writeFileSync(done, '');
  }
  await store.seal();
  return { store, close: () => store.close() };
}

async function openPostgres(): Promise<{ store: TraceStore; close: () => Promise<void> }> {
  const url = process.env.DATABASE_URL_TEST ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_insights_${process.pid}`;
  const store = await openPostgresTraces({ databaseUrl: url, requestTimeoutMs: 600_000 }, schema, {
    sealEveryMs: 0,
    now: () => END,
  });
  await load(store);
  await store.seal();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  for (const table of ['spans', 'trace_skills', 'trace_agents', 'skill_spans'])
    await admin.query(`VACUUM ANALYZE ${schema}.${table}`);
  return {
    store,
    close: async () => {
      await store.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/**
 * Operation 1's answers for the numbers of one step: per subject, workspace and window that has
 * spans (listed before the clock starts), three aggregates. Answers its time (ms) and query count.
 */
async function baselineStep(store: TraceStore, orgId: string, stepS: number): Promise<[number, number]> {
  const windows = stepWindows(stepS);
  const rows: { subjectType: 'skill' | 'agent'; subject: string; workspaceId: string; window: number }[] = [];
  for (const subjectType of ['skill', 'agent'] as const) {
    let after: string | null = null;
    do {
      const page = await store.subjectFacts({ orgId, subjectType, windows, limit: 1000, after });
      rows.push(...page.rows.map((r) => ({ subjectType, ...r })));
      after = page.next;
    } while (after !== null);
  }
  const t0 = performance.now();
  for (const r of rows) {
    const w = windows[r.window] as (typeof windows)[number];
    const base = {
      orgId,
      subject: r.subjectType === 'skill' ? { skill: r.subject } : { agent: r.subject },
      startS: w.startS,
      endS: w.endS,
      workspaceIds: [r.workspaceId],
      filters: [],
    };
    await store.aggregate({ ...base, groupBy: [], measures: MEASURES });
    await store.aggregate({ ...base, groupBy: ['model'], measures: ['cost'] });
    await store.aggregate({ ...base, groupBy: ['tool', 'mcp'], measures: ['tool_calls'] });
  }
  return [performance.now() - t0, 3 * rows.length];
}

const { store, close } = ENGINE === 'duckdb' ? await openDuckDb() : await openPostgres();
try {
  const spans = await store.countSpans();
  console.log(
    `insight detection benchmark: ${spans.toLocaleString()} spans in ${ENGINE === 'duckdb' ? 'DuckDB (its worker thread, sealed)' : 'PostgreSQL (sealed, analyzed)'}, ` +
      `${orgs.length} organizations of ${SKILLS} skills (${SKILLS / 2} planted) over ${DAYS} days, ${STEPS} hourly steps each`,
  );
  for (const o of orgs) {
    const t0 = performance.now();
    const run = await detectSteps(store, o.orgId, END - STEPS * 3600, END);
    const ms = performance.now() - t0;
    const s = score(o, run.insights);
    console.log(
      `  ${o.orgId}: detection ${(ms / 1000).toFixed(1)} s for ${run.steps} steps (${(ms / run.steps).toFixed(0)} ms a step, ` +
        `${(run.examined / run.steps).toFixed(0)} subjects a step); plants found ${s.found} of ${s.planted} ` +
        `(recall ${s.recall.toFixed(3)}), false alarms ${s.falseAlarms} of ${s.alarms} alarms (${s.falseAlarmShare.toFixed(3)}), ` +
        `quiet (skill, kind) pairs alarmed ${s.alarmedQuietPairs} of ${s.quietPairs} (${s.falsePairRate.toFixed(3)})`,
    );
    let queries = 0;
    let baselineMs = 0;
    for (let i = 0; i < BASELINE_STEPS; i++) {
      const [ms, n] = await baselineStep(store, o.orgId, END - i * 3600);
      baselineMs += ms / BASELINE_STEPS;
      queries += n;
    }
    const f0 = performance.now();
    await detectSteps(store, o.orgId, END - BASELINE_STEPS * 3600, END);
    const factsMs = (performance.now() - f0) / BASELINE_STEPS;
    console.log(
      `    a step, the same ${BASELINE_STEPS} steps: detection ${factsMs.toFixed(0)} ms; baseline (operation 1, ` +
        `${(queries / BASELINE_STEPS).toFixed(0)} aggregates) ${baselineMs.toFixed(0)} ms; ratio detection/baseline ${(factsMs / baselineMs).toFixed(3)}`,
    );
  }
  console.log(`  plants: ${orgs.map((o) => plantsOf(o).length).join(' + ')}, of three kinds in turn`);
} finally {
  await close();
}
