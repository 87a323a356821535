/**
 * Ingestion quotas over a real Redis (127.0.0.1:6379, or REDIS_URL_TEST), as replicas share them:
 * the counter port counts amounts and refunds them atomically; two app instances over the same
 * stores, each with its own Redis client (two replicas), spend one caller's and one organization's
 * quota together, refuse with 429 and store nothing once over it, and give a refused request back
 * for both; an unreachable Redis admits requests. The clock is frozen at a random future window,
 * so runs never share a key.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/auth/caller.ts';
import { RedisRateLimiter } from '../../src/store/redis/rate-limiter.ts';
import { IngestQuotas } from '../../src/otlp/ingest-quotas.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { spansBody } from '../fixtures/otlp-body.ts';
import { startReplica, type Replica } from '../graphql/replica.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { REDIS_URL, redisReachable } from '../helpers/redis-server.ts';

const URL = REDIS_URL;
const up = await redisReachable('Redis ingestion-quota tests');

/** Noon (UTC) of a random day after 2030 and a quarter second. */
const randomNoon = () => Date.UTC(2030, 0, 1 + Math.floor(Math.random() * 100_000), 12, 0, 0, 250);

describe.skipIf(!up)('RedisRateLimiter amounts and refunds', () => {
  const limiters: RedisRateLimiter[] = [];
  afterAll(async () => {
    for (const l of limiters) await l.close();
  });

  it('counts amounts across two clients, refunds into the window counted, and never into a later one', async () => {
    let clock = randomNoon();
    const a = new RedisRateLimiter(URL, () => clock);
    const b = new RedisRateLimiter(URL, () => clock);
    limiters.push(a, b);
    const key = `test-${Math.random()}`;
    const first = await a.hit(key, 1000, 700);
    expect(first).toEqual({ count: 700, resetMs: 750, windowStart: clock - 250 });
    expect((await b.hit(key, 1000, 400)).count).toBe(1100);
    await b.refund(key, 1000, first.windowStart, 400);
    expect((await a.hit(key, 1000, 0)).count).toBe(700);
    // The per-minute limits still count one by default.
    expect((await a.hit(`${key}-m`, 60_000)).count).toBe(1);
    expect((await b.hit(`${key}-m`, 60_000)).count).toBe(2);

    clock += 1000;
    await a.refund(key, 1000, first.windowStart, 700);
    expect((await b.hit(key, 1000, 5)).count).toBe(5);
  });

  it('an unreachable Redis admits ingestion', async () => {
    const dead = new RedisRateLimiter('redis://127.0.0.1:1', randomNoon);
    limiters.push(dead);
    const quotas = new IngestQuotas(dead, {
      callerRecordsPerS: 1,
      callerBytesPerDay: 1,
      orgRecordsPerS: 1,
      orgBytesPerDay: 1,
    });
    const caller: Caller = { kind: 'user', orgId: 'o', userId: 'u' };
    expect((await quotas.spend(caller, { records: 10, bytes: 10 })).refused).toBeNull();
  });
});

describe.skipIf(!up)('two app instances sharing Redis', () => {
  let t: TestApp | undefined;
  let replica: Replica | undefined;
  afterEach(async () => {
    await replica?.close();
    await t?.close();
  });

  it("spend one caller's records and one organization's bytes together; a refusal stores nothing and gives its bytes back", async () => {
    let clock = randomNoon();
    const bundle = smallBundle();
    bundle.memberships.push({ workspace_id: 'ws-a-other', user_id: 'u-none', role: 'editor' });
    t = await startTestApp({
      bundle,
      env: {
        OTLP_MAX_SPANS: '100',
        INGEST_QUOTA_CALLER_RECORDS_PER_S: '100',
        INGEST_QUOTA_ORG_RECORDS_PER_S: '0',
        INGEST_QUOTA_CALLER_BYTES_PER_DAY: '0',
        INGEST_QUOTA_ORG_BYTES_PER_DAY: '60000',
        OTLP_MAX_DECOMPRESSED_BYTES: '32768',
      },
      rateLimiter: new RedisRateLimiter(URL, () => clock),
    });
    replica = await startReplica(t, { rateLimiter: new RedisRateLimiter(URL, () => clock) });
    const [a, b] = [t.app, replica.app];
    const post = async (app: typeof a, user: string, body: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...(await t?.auth(user)), 'content-type': 'application/json' },
        payload: body,
      });

    const admitted = [spansBody(60), spansBody(40)];
    expect((await post(a, 'u-admin', admitted[0] as string)).statusCode).toBe(200);
    const stored = await t.traces.countSpans();
    const over = await post(b, 'u-admin', spansBody(60));
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBe('1');
    expect(await t.traces.countSpans()).toBe(stored);
    // The 60 refused through B fill the second (records are not given back), for A too.
    expect((await post(a, 'u-admin', admitted[1] as string)).statusCode).toBe(429);
    clock += 1000;
    expect((await post(b, 'u-admin', admitted[1] as string)).statusCode).toBe(200);

    // The organization's bytes: what u-admin sent through A and B counts for u-none too.
    const big = spansBody(20, 1000);
    admitted.push(big);
    const third = await post(a, 'u-none', big);
    expect(third.statusCode).toBe(200);
    const left = 60_000 - admitted.reduce((n, body) => n + Buffer.byteLength(body), 0);
    expect(third.headers.ratelimit).toBe(`"caller-records";r=80;t=1, "org-bytes";r=${left};t=43199`);
    const tooBig = spansBody(20, 1000);
    expect(Buffer.byteLength(tooBig)).toBeGreaterThan(left);
    const refused = await post(b, 'u-none', tooBig);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('43199');
    // The refused bytes were given back to the day; its records stay in the second.
    expect(refused.headers.ratelimit).toBe(`"caller-records";r=60;t=1, "org-bytes";r=${left};t=43199`);
    expect(await t.traces.countSpans()).toBe(stored + 40 + 20);
  });
});
