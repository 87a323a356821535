/**
 * The 504 storm: one caller sends 40 requests of 10,000 skill spans at once to the service started
 * as `node src/main.ts` (embedded stores, its own process and data directory), then sends again
 * every request not answered 200, as an exporter does (honouring Retry-After), until each is.
 * Targets: after the first round, the spans stored equal the spans of the requests answered 200
 * (no error for data that was stored); after the retries, every span is stored exactly once.
 *
 *   npm run bench:abuse -- storm        (or: node bench/abuse-storm.ts [--requests 40] [--spans 10000])
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { loadDevIssuer } from '../src/auth/dev-issuer.ts';
import { attrs, otlpTraceBody } from '../test/fixtures/otlp-body.ts';
import { argNumber } from './harness.ts';
import { startService } from './service-process.ts';

const REQUESTS = argNumber('requests', 40);
const SPANS = argNumber('spans', 10_000);
const SKILL = 'skill-0001';

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gw-storm-'));
const service = await startService({ dataDir, env: { DEMO_TRACE_SPANS: '0' } });
const { origin } = service;
const token = await (await loadDevIssuer(dataDir)).mint({ sub: 'user-alice', org: 'org-acme', ttlSeconds: 3600 });
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' };

const now = Math.floor(Date.now() / 1000) - 600;
/** Request r: SPANS skill invocations with ids of their own. */
const body = (r: number) =>
  zlib.gzipSync(
    JSON.stringify(
      otlpTraceBody({
        resource: attrs({ 'service.name': 'storm', 'workspace.id': 'ws-acme-platform' }),
        spans: Array.from({ length: SPANS }, (_, i) => ({
          traceId: (r * SPANS + i + 1).toString(16).padStart(32, '5'),
          spanId: (r * SPANS + i + 1).toString(16).padStart(16, '7'),
          name: 'invoke_skill',
          startTimeUnixNano: `${now}000000000`,
          endTimeUnixNano: `${now}250000000`,
          attributes: attrs({ 'gen_ai.operation.name': 'invoke_skill', 'skill.id': SKILL }),
        })),
      }),
    ),
  );

async function send(b: Buffer): Promise<{ status: number; retryAfterS: number }> {
  try {
    const res = await fetch(`${origin}/v1/traces`, { method: 'POST', headers, body: b });
    await res.arrayBuffer();
    return { status: res.status, retryAfterS: Number(res.headers.get('retry-after') ?? 1) };
  } catch {
    return { status: 0, retryAfterS: 1 };
  }
}

async function stored(): Promise<number> {
  const res = await fetch(`${origin}/skill/v1/skills/${SKILL}/traces/stats/query`, {
    method: 'POST',
    headers: { authorization: headers.authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      start_time_unix_seconds: now - 60,
      end_time_unix_seconds: now + 60,
      request_type: 'scalar',
      queries: [{ name: 'n', measure: 'skill_invocations' }],
    }),
  });
  return ((await res.json()) as { data: { results: { value: number }[] } }).data.results[0]?.value ?? -1;
}

const bodies = Array.from({ length: REQUESTS }, (_, r) => body(r));
const counts = (statuses: number[]) =>
  Object.entries(statuses.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {}))
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ');

const t0 = performance.now();
const first = await Promise.all(bodies.map(send));
const firstMs = performance.now() - t0;
// Every write a first-round request began has committed once its answer is in: count them now.
const afterFirst = await stored();
const ok = first.filter((a) => a.status === 200).length;
let pending = bodies.map((_, r) => r).filter((r) => first[r]?.status !== 200);
const retried = pending.length;
let rounds = 0;
const retryStatuses: number[] = [];
while (pending.length > 0 && rounds < 20) {
  rounds++;
  const wait = Math.max(...pending.map((r) => first[r]?.retryAfterS ?? 1), 1);
  await new Promise((r) => setTimeout(r, Math.min(wait, 5) * 1000));
  const answers = await Promise.all(pending.map((r) => send(bodies[r] as Buffer)));
  retryStatuses.push(...answers.map((a) => a.status));
  pending = pending.filter((_, i) => answers[i]?.status !== 200);
}
const final = await stored();

const truthful = afterFirst === ok * SPANS;
const once = final === REQUESTS * SPANS && pending.length === 0;
console.log(`504 storm: ${REQUESTS} requests × ${SPANS.toLocaleString('en-US')} skill spans from one caller at once`);
console.log(`  first round      ${counts(first.map((a) => a.status))} in ${(firstMs / 1000).toFixed(1)} s`);
console.log(
  `  stored then      ${afterFirst.toLocaleString('en-US')} spans; answered 200: ${(ok * SPANS).toLocaleString('en-US')} (target: equal, no error for stored data): ${truthful ? 'met' : 'MISSED'}`,
);
console.log(
  `  retried          ${retried} requests over ${rounds} rounds (answers ${counts(retryStatuses) || 'none'})`,
);
console.log(
  `  stored finally   ${final.toLocaleString('en-US')} spans of ${(REQUESTS * SPANS).toLocaleString('en-US')} sent (target: each once): ${once ? 'met' : 'MISSED'}`,
);
await service.stop();
await fs.rm(dataDir, { recursive: true, force: true });
process.exit(truthful && once ? 0 : 1);
