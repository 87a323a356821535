/**
 * Trace-store reads hidden in one GraphQL operation: `Tool.usage(since:)` under 30 aliases with
 * distinct windows, over the tool list and through `_entities` (200 tools × 30 aliases), against
 * the service started as `node src/main.ts` in its own process over N demo spans (a quarter of them
 * tool calls), while bench/stats-sampler.ts (a third process) has a second user ask for statistics
 * again and again. The reference is `traceStats` at the whole per-operation budget (two year-long
 * requests of 20 compared queries, 4,320 units), measured in the same run.
 *
 * Targets: an operation priced over the budget is refused (400, `trace_work`) within 1 s; one
 * priced within it (the heaviest the budget lets through: all-time windows up to the budget) is
 * answered no slower than the traceStats reference, and the second user's worst latency during it
 * is no worse than during the reference. Prints each figure with its target and verdict; exits 1
 * when one is missed.
 *
 *   node bench/abuse-usage.ts [--spans 5000000] [--rounds 3] [--root DIR]
 *
 * `--root DIR` starts the service from another checkout (with its node_modules), e.g. the commit
 * before a change, over the same data, to print its figures beside these.
 *
 * The data directory ($TMPDIR/gw-abuse-usage-N) is seeded on the first run (the service's own
 * first-start seeding, which takes minutes for millions of spans) and reused by later ones.
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadDevIssuer } from '../src/auth/dev-issuer.ts';
import { TRACE_WORK_BUDGET, usageWork } from '../src/graphql/limits/trace-budget.ts';
import { usageWindowWork } from '../src/tools/tool-usage.ts';
import { statsWork, type TraceStatsRequest } from '../src/skills/stats-request.ts';
import { freePort } from '../test/fixtures/service-process.ts';
import { argNumber } from './harness.ts';
import { startService } from './service-process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** `--root DIR`: run the service of another checkout (a commit before a change) over the same data. */
const rootAt = process.argv.indexOf('--root');
const SERVICE_ROOT = rootAt < 0 ? ROOT : path.resolve(process.argv[rootAt + 1] ?? '.');
const SPANS = argNumber('spans', 5_000_000);
const ROUNDS = argNumber('rounds', 3);
const DAY = 86400;

const dataDir = path.join(os.tmpdir(), `gw-abuse-usage-${SPANS}`);
const seeded = path.join(dataDir, 'seeded');
if (!fs.existsSync(seeded)) {
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  console.log(
    `seeding ${SPANS.toLocaleString('en-US')} demo spans on the service's first start into ${dataDir} (kept for later runs)`,
  );
}
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
/** The service as users run it (demo data seeded on its first start, which may take an hour). */
const start = () =>
  startService({
    dataDir,
    port,
    root: SERVICE_ROOT,
    env: { DEMO_TRACE_SPANS: String(SPANS) },
    readyTimeoutMs: 60 * 60_000,
  });
let service = await start();
if (!fs.existsSync(seeded)) {
  // The seeded spans are sealed by the running service in the background for minutes; a restart
  // seals them while opening, before it answers, so no measurement below runs beside that work.
  await service.stop();
  service = await start();
  fs.writeFileSync(seeded, `${new Date().toISOString()}\n`);
}

const issuer = await loadDevIssuer(dataDir);
const bearer = async (sub: string) => ({
  authorization: `Bearer ${await issuer.mint({ sub, org: 'org-acme', ttlSeconds: 3600 })}`,
  'content-type': 'application/json',
});
const alice = await bearer('user-alice');
const bob = await bearer('user-bob');

interface Answer {
  status: number;
  code: string;
  ms: number;
  body: { data?: unknown; errors?: { extensions?: { code?: string; limit?: string } }[] };
}
async function graphql(headers: Record<string, string>, payload: object): Promise<Answer> {
  const t0 = performance.now();
  const res = await fetch(`${origin}/graphql`, { method: 'POST', headers, body: JSON.stringify(payload) });
  const body = (await res.json()) as Answer['body'];
  const ms = performance.now() - t0;
  const first = body.errors?.[0]?.extensions;
  return { status: res.status, code: first ? `${first.code ?? ''} ${first.limit ?? ''}`.trim() : '', ms, body };
}

const now = Math.floor(Date.now() / 1000);

// The second user: Bob (a viewer of one team), asking for a skill he can read, as the Skills page does.
const summary = (id: string) => ({
  url: `/skill/v1/skills/${id}/traces/stats/query`,
  headers: bob,
  body: JSON.stringify({
    start_time_unix_seconds: now - 30 * DAY,
    end_time_unix_seconds: now,
    request_type: 'time_series',
    queries: [
      { name: 'invocations', measure: 'skill_invocations' },
      { name: 'errors', measure: 'error_rate' },
      { name: 'p99', measure: 'latency_p99' },
    ],
  }),
});
let readable = '';
for (let i = 1; i <= 39 && readable === ''; i++) {
  const id = `skill-${String(i).padStart(4, '0')}`;
  const r = summary(id);
  if ((await fetch(`${origin}${r.url}`, { method: 'POST', headers: r.headers, body: r.body })).status === 200)
    readable = id;
}
if (readable === '') throw new Error('Bob reads no skill of the demo data');

const list = await graphql(alice, { query: '{ tools(first: 200) { totalCount nodes { id } } }' });
const toolIds = (list.body.data as { tools: { nodes: { id: string }[] } }).tools.nodes.map((t) => t.id);
// 200 references, as the attack sent them (ids repeat when the demo has fewer tools).
const references = Array.from({ length: 200 }, (_, i) => ({ __typename: 'Tool', id: toolIds[i % toolIds.length] }));

const usageFields = (windows: number[]) =>
  windows.map((s, i) => `a${i}: usage(since: ${s}) { calls errorRate p95LatencyMs lastCalledAt }`).join(' ');
const overList = (windows: number[]) => ({ query: `{ tools(first: 200) { nodes { id ${usageFields(windows)} } } }` });
const overEntities = (windows: number[]) => ({
  query: `query($r: [_Any!]!) { _entities(representations: $r) { ... on Tool { id ${usageFields(windows)} } } }`,
  variables: { r: references },
});

/** 30 distinct windows that each reach every stored call (since 1970 plus a few seconds). */
const allTime = Array.from({ length: 30 }, (_, i) => i + 1);
/** 30 distinct windows spread over the last year. */
const lastYear = Array.from({ length: 30 }, (_, i) => now - (i + 1) * 12 * DAY);
/** The heaviest usage the budget lets through: as many all-time windows as it pays for. */
const heaviest = allTime.slice(0, Math.floor(TRACE_WORK_BUDGET / usageWindowWork(null, now)));

const yearOf20 = {
  requestType: 'SCALAR',
  compare: 'PREVIOUS_PERIOD',
  startTimeUnixSeconds: now - 366 * DAY,
  endTimeUnixSeconds: now,
  queries: Array.from({ length: 20 }, (_, k) => ({
    name: `q${k}`,
    measure: 'LATENCY_P99',
    filters: [{ key: 'MODEL', op: 'NEQ', value: `m${k}` }],
  })),
};
/** The same request as REST would take it, for its price. */
const yearOf20Rest = {
  request_type: 'scalar',
  compare: 'previous_period',
  start_time_unix_seconds: yearOf20.startTimeUnixSeconds,
  end_time_unix_seconds: yearOf20.endTimeUnixSeconds,
  queries: yearOf20.queries.map((q) => ({ name: q.name, measure: 'latency_p99' })),
} as TraceStatsRequest;
const reference = {
  query:
    'query($i: TraceStatsInput!) { skill(id: "skill-0001") { a: traceStats(input: $i) { meta { warnings } } b: traceStats(input: $i) { meta { warnings } } } }',
  variables: { i: yearOf20 },
};

interface Scenario {
  name: string;
  payload: object;
  /** Work units the budget prices the operation at. */
  units: number;
}
const scenarios: Scenario[] = [
  {
    name: 'traceStats at the budget: 2 × 20 queries × 366 days, compared',
    payload: reference,
    units: 2 * statsWork(yearOf20Rest),
  },
  {
    name: 'Tool.usage, one 30-day window, 200 tools (ordinary)',
    payload: overList([now - 30 * DAY]),
    units: usageWork([now - 30 * DAY], now),
  },
  {
    name: 'Tool.usage × 30 aliases, all-time windows, tools(first: 200)',
    payload: overList(allTime),
    units: usageWork(allTime, now),
  },
  {
    name: 'Tool.usage × 30 aliases, windows over a year, tools(first: 200)',
    payload: overList(lastYear),
    units: usageWork(lastYear, now),
  },
  {
    name: '_entities 200 tools × 30 aliases, all-time windows',
    payload: overEntities(allTime),
    units: usageWork(allTime, now),
  },
  {
    name: '_entities 200 tools × 30 aliases, windows over a year',
    payload: overEntities(lastYear),
    units: usageWork(lastYear, now),
  },
  {
    name: `Tool.usage × ${heaviest.length} all-time windows (the most the budget admits)`,
    payload: overList(heaviest),
    units: usageWork(heaviest, now),
  },
  {
    name: `_entities 200 tools × ${heaviest.length} all-time windows`,
    payload: overEntities(heaviest),
    units: usageWork(heaviest, now),
  },
];

const sampler = fork(path.join(ROOT, 'bench/stats-sampler.ts'), [origin, JSON.stringify(summary(readable))], {
  stdio: 'inherit',
});
interface Sample {
  count: number;
  failures: number;
  p50Ms: number;
  maxMs: number;
}
const ask = <T>(cmd: string) =>
  new Promise<T>((resolve) => {
    sampler.once('message', (m) => resolve(m as T));
    sampler.send({ cmd });
  });

// Warm-up: every scenario once, the second user's requests under way.
await new Promise((r) => setTimeout(r, 1000));
for (const s of scenarios) await graphql(alice, s.payload);
await ask('start');
await new Promise((r) => setTimeout(r, 3000));
const calm = await ask<Sample>('stop');

const spans = SPANS.toLocaleString('en-US');
console.log(
  `service ${SERVICE_ROOT === ROOT ? 'of this checkout' : `from ${SERVICE_ROOT}`}, pid ${service.child.pid}, ${spans} demo spans (about a quarter tool calls), ${toolIds.length} tools of org-acme; second user: Bob, a 30-day series of 3 measures of ${readable}, 20 ms apart`,
);
console.log(
  `trace-work budget ${TRACE_WORK_BUDGET} units per operation; each operation sent back to back, at least ${ROUNDS} times and for 2 s\n`,
);
console.log(
  `second user, no attack: median ${calm.p50Ms.toFixed(1)} ms, worst ${calm.maxMs.toFixed(1)} ms (${calm.count} requests)\n`,
);
const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log(
  `${'operation'.padEnd(66)} ${pad('units', 6)} ${pad('status', 6)}  ${'code'.padEnd(34)} ${pad('answers', 7)} ${pad('median ms', 9)} ${pad('2nd user median', 15)} ${pad('2nd user worst', 14)}  verdict`,
);

let allGood = true;
let ref: { ms: number; worst: number } | undefined;
for (const s of scenarios) {
  await ask('start');
  // At least ROUNDS answers and 2 s of them, so that a refusal in milliseconds is measured under a loop.
  const answers: Answer[] = [];
  const began = performance.now();
  while (answers.length < ROUNDS || performance.now() - began < 2000) answers.push(await graphql(alice, s.payload));
  const second = await ask<Sample>('stop');
  const ms = [...answers.map((a) => a.ms)].sort((a, b) => a - b)[Math.floor(answers.length / 2)] as number;
  const last = answers[answers.length - 1] as Answer;
  let verdict: string;
  if (ref === undefined) {
    ref = { ms, worst: second.maxMs };
    verdict = last.status === 200 && last.body.errors === undefined ? 'reference' : 'MISSED (the reference failed)';
    if (!verdict.startsWith('reference')) allGood = false;
  } else if (s.units > TRACE_WORK_BUDGET) {
    const good = answers.every((a) => a.status === 400 && a.code.endsWith('trace_work')) && ms < 1000;
    verdict = good ? 'ok: refused within 1 s' : 'MISSED: target refused within 1 s';
    allGood &&= good;
  } else {
    const answered = answers.every((a) => a.status === 200 && a.body.errors === undefined);
    const good = answered && ms <= ref.ms && second.maxMs <= ref.worst;
    verdict = good
      ? 'ok: answered within the reference'
      : `MISSED: target answered, <= ${ref.ms.toFixed(0)} ms, 2nd user worst <= ${ref.worst.toFixed(0)} ms`;
    allGood &&= good;
  }
  console.log(
    `${s.name.padEnd(66)} ${pad(s.units, 6)} ${pad(last.status, 6)}  ${last.code.slice(0, 34).padEnd(34)} ${pad(answers.length, 7)} ${pad(ms.toFixed(0), 9)} ${pad(second.p50Ms.toFixed(1), 15)} ${pad(second.maxMs.toFixed(1), 14)}  ${verdict}`,
  );
}
sampler.disconnect();
console.log(`\n${allGood ? 'all targets met' : 'some targets missed'}`);
await service.stop();
process.exit(allGood ? 0 : 1);
