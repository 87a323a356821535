/**
 * Per-tenant ingestion quotas (otlp/ingest-quotas.ts) through the OTLP routes, on the in-process
 * counters with a clock the test moves: records a second and bytes a UTC day, per caller and per
 * organization, over every signal; over a quota the answer is 429 rate_limited with Retry-After and
 * nothing of the request is stored; a refused request is given back to every counter it was counted
 * in; the RateLimit fields say what is left. The same over Redis and two app instances is in
 * test/server/redis-ingest-quotas.test.ts.
 */
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { InProcessRateLimiter } from '../../src/store/memory/rate-limiter.ts';
import { IngestQuotas } from '../../src/otlp/ingest-quotas.ts';
import { encodeExportRequest } from '../../src/otlp/traces/decode.ts';
import { startOtlpGrpc } from '../../src/grpc/otlp-grpc.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { gaugeBody, logsBody, spansBody } from '../fixtures/otlp-body.ts';

/** Noon (UTC) and a quarter second: the second's window resets in 1 s, the day's in 43,200 s. */
const NOON = Date.UTC(2030, 0, 1, 12, 0, 0, 250);
const OFF = {
  INGEST_QUOTA_CALLER_RECORDS_PER_S: '0',
  INGEST_QUOTA_ORG_RECORDS_PER_S: '0',
  INGEST_QUOTA_CALLER_BYTES_PER_DAY: '0',
  INGEST_QUOTA_ORG_BYTES_PER_DAY: '0',
};

/** The small fixture plus u-none as an editor of ws-a-other: two callers of org-a that may ingest. */
function bundle() {
  const b = smallBundle();
  b.memberships.push({ workspace_id: 'ws-a-other', user_id: 'u-none', role: 'editor' });
  return b;
}

let t: TestApp | undefined;
let clock = NOON;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start(env: Record<string, string>): Promise<TestApp> {
  clock = NOON;
  t = await startTestApp({
    env: { ...OFF, ...env },
    bundle: bundle(),
    rateLimiter: new InProcessRateLimiter(() => clock),
  });
  return t;
}

async function post(app: TestApp, user: string, signal: string, body: string | Buffer, gzip = false) {
  return app.app.inject({
    method: 'POST',
    url: `/v1/${signal}`,
    headers: {
      ...(await app.auth(user, user === 'u-b' ? 'org-b' : 'org-a')),
      'content-type': 'application/json',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    },
    payload: body,
  });
}

describe('records a second per caller', () => {
  it('admits up to the quota, then 429 with Retry-After and nothing stored; a refused request fills the second', async () => {
    const app = await start({ INGEST_QUOTA_CALLER_RECORDS_PER_S: '100', OTLP_MAX_SPANS: '100' });
    const first = await post(app, 'u-admin', 'traces', spansBody(60));
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"caller-records";q=100;w=1');
    expect(first.headers.ratelimit).toBe('"caller-records";r=40;t=1');

    const before = await app.traces.countSpans();
    expect(before).toBe(60);
    const over = await post(app, 'u-admin', 'traces', spansBody(60));
    const problem = expectProblem(over, 429, 'rate_limited');
    expect(problem.detail).toContain('100 records a second for this caller');
    expect(over.headers['retry-after']).toBe('1');
    // The refused records are not given back: they fill the second, so that a caller over its
    // quota costs no more decoding until the next.
    expect(over.headers.ratelimit).toBe('"caller-records";r=0;t=1');
    expect(await app.traces.countSpans()).toBe(before);

    // Another caller of the same organization has a quota of its own.
    expect((await post(app, 'u-none', 'traces', spansBody(60))).statusCode).toBe(200);
    // The rest of this second is refused before the body is read: even a malformed one is 429, not 400.
    expect((await post(app, 'u-admin', 'traces', spansBody(1))).statusCode).toBe(429);
    const unread = await post(app, 'u-admin', 'traces', '{ not json');
    expectProblem(unread, 429, 'rate_limited');
    expect(unread.headers['retry-after']).toBe('1');

    clock += 1000;
    expect((await post(app, 'u-admin', 'traces', spansBody(60))).statusCode).toBe(200);
    expect(await app.traces.countSpans()).toBe(60 + 60 + 60);
  });

  it('counts log records and metric data points as records, including those that are not stored', async () => {
    const app = await start({ INGEST_QUOTA_CALLER_RECORDS_PER_S: '100', OTLP_MAX_SPANS: '100' });
    const logs = await post(app, 'u-admin', 'logs', logsBody(60));
    expect(logs.statusCode).toBe(200);
    expect(logs.headers.ratelimit).toBe('"caller-records";r=40;t=1');
    const points = await post(app, 'u-admin', 'metrics', gaugeBody(40));
    expect(points.statusCode).toBe(200);
    expect(points.headers.ratelimit).toBe('"caller-records";r=0;t=1');
    expectProblem(await post(app, 'u-admin', 'metrics', gaugeBody(1)), 429, 'rate_limited');
    clock += 1000;
    expect((await post(app, 'u-admin', 'metrics', gaugeBody(41))).headers.ratelimit).toBe('"caller-records";r=59;t=1');
  });
});

describe('records a second per organization', () => {
  it("one caller's records spend the organization's quota for every caller of it, not for other organizations", async () => {
    const app = await start({ INGEST_QUOTA_ORG_RECORDS_PER_S: '100', OTLP_MAX_SPANS: '100' });
    expect((await post(app, 'u-admin', 'traces', spansBody(60))).statusCode).toBe(200);
    const other = await post(app, 'u-none', 'traces', spansBody(60));
    expect(expectProblem(other, 429, 'rate_limited').detail).toContain('100 records a second for this organization');
    expect(other.headers['ratelimit-policy']).toBe('"org-records";q=100;w=1');
    expect(await app.traces.countSpans()).toBe(60);
    expect((await post(app, 'u-b', 'traces', spansBody(60))).statusCode).toBe(200);
    // The refused 60 fill the organization's second: u-none waits for the next one.
    expect((await post(app, 'u-none', 'traces', spansBody(40))).statusCode).toBe(429);
    clock += 1000;
    expect((await post(app, 'u-none', 'traces', spansBody(40))).statusCode).toBe(200);
    expect(await app.traces.countSpans()).toBe(160);
  });
});

describe('bytes a day', () => {
  it('counts the decompressed body per caller until UTC midnight, then the next day starts over', async () => {
    const app = await start({ INGEST_QUOTA_CALLER_BYTES_PER_DAY: '20000', OTLP_MAX_DECOMPRESSED_BYTES: '8192' });
    const bodies = [spansBody(4, 1200), spansBody(4, 1200), spansBody(4, 1200)];
    let spent = 0;
    for (const body of bodies) {
      const res = await post(app, 'u-admin', 'traces', body);
      expect(res.statusCode).toBe(200);
      spent += Buffer.byteLength(body);
      expect(res.headers['ratelimit-policy']).toBe('"caller-bytes";q=20000;w=86400');
      expect(res.headers.ratelimit).toBe(`"caller-bytes";r=${20000 - spent};t=43200`);
    }
    // Gzip on the wire: the inflated body is what counts, and it no longer fits.
    const big = spansBody(4, 1200);
    expect(spent + Buffer.byteLength(big)).toBeGreaterThan(20000);
    const before = await app.traces.countSpans();
    const over = await post(app, 'u-admin', 'traces', zlib.gzipSync(big), true);
    expect(expectProblem(over, 429, 'rate_limited').detail).toContain('20000 bytes a day (UTC) for this caller');
    expect(over.headers['retry-after']).toBe('43200');
    expect(await app.traces.countSpans()).toBe(before);
    // What is left still admits a small body: the refused one was given back.
    const small = spansBody(1);
    const fits = await post(app, 'u-admin', 'traces', zlib.gzipSync(small), true);
    expect(fits.statusCode).toBe(200);
    expect(fits.headers.ratelimit).toBe(`"caller-bytes";r=${20000 - spent - Buffer.byteLength(small)};t=43200`);

    clock = Date.UTC(2030, 0, 2, 0, 0, 0, 0);
    expect((await post(app, 'u-admin', 'traces', big)).statusCode).toBe(200);
  });

  it('counts a body large enough to be handed to a decoding thread without a copy', async () => {
    const app = await start({ INGEST_QUOTA_CALLER_BYTES_PER_DAY: '300000', OTLP_MAX_DECOMPRESSED_BYTES: '262144' });
    const body = spansBody(50, 2000);
    expect(Buffer.byteLength(body)).toBeGreaterThan(64 * 1024);
    const res = await post(app, 'u-admin', 'traces', body);
    expect(res.statusCode).toBe(200);
    expect(res.headers.ratelimit).toBe(`"caller-bytes";r=${300000 - Buffer.byteLength(body)};t=43200`);
    expect((await post(app, 'u-admin', 'traces', body)).statusCode).toBe(200);
    expectProblem(await post(app, 'u-admin', 'traces', body), 429, 'rate_limited');
  });

  it("counts every caller's bytes against the organization's day", async () => {
    const app = await start({ INGEST_QUOTA_ORG_BYTES_PER_DAY: '10000', OTLP_MAX_DECOMPRESSED_BYTES: '8192' });
    const body = spansBody(4, 1200);
    expect((await post(app, 'u-admin', 'traces', body)).statusCode).toBe(200);
    const over = await post(app, 'u-none', 'traces', body);
    expect(expectProblem(over, 429, 'rate_limited').detail).toContain('10000 bytes a day (UTC) for this organization');
    expect(over.headers['retry-after']).toBe('43200');
    expect((await post(app, 'u-b', 'traces', body)).statusCode).toBe(200);
  });

  it('a request refused by the records quota spends nothing of the day, and Retry-After is the later reset', async () => {
    const app = await start({
      INGEST_QUOTA_CALLER_RECORDS_PER_S: '100',
      OTLP_MAX_SPANS: '100',
      INGEST_QUOTA_CALLER_BYTES_PER_DAY: '1048576',
      OTLP_MAX_DECOMPRESSED_BYTES: '1048576',
    });
    const first = spansBody(60);
    expect((await post(app, 'u-admin', 'traces', first)).statusCode).toBe(200);
    const refused = await post(app, 'u-admin', 'traces', spansBody(60));
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    clock += 1000;
    const next = spansBody(1);
    const res = await post(app, 'u-admin', 'traces', next);
    expect(res.headers.ratelimit).toBe(
      `"caller-records";r=99;t=1, "caller-bytes";r=${1048576 - Buffer.byteLength(first) - Buffer.byteLength(next)};t=43199`,
    );
  });
});

describe('over gRPC', () => {
  /** The spans of spansBody(n) as a protobuf ExportTraceServiceRequest. */
  function protobufSpans(n: number): Buffer {
    const message = JSON.parse(spansBody(n)) as {
      resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[];
    };
    for (const s of message.resourceSpans[0]?.scopeSpans[0]?.spans ?? []) {
      s.traceId = Buffer.from(String(s.traceId), 'hex');
      s.spanId = Buffer.from(String(s.spanId), 'hex');
    }
    return encodeExportRequest(message);
  }

  it('goes through the same route: a call over the quota is RESOURCE_EXHAUSTED and stores nothing', async () => {
    const app = await start({ INGEST_QUOTA_CALLER_RECORDS_PER_S: '100', OTLP_MAX_SPANS: '100' });
    const server = await startOtlpGrpc(app.app, {
      config: app.config,
      port: 0,
      authenticate: (h) => app.authenticator.authenticate(h),
      registry: app.registry,
    });
    const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${await app.token('u-admin')}`);
    const call = (body: Buffer) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        client.makeUnaryRequest(
          '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          (b: Buffer) => b,
          (b: Buffer) => b,
          body,
          metadata,
          (error) => resolve(error),
        );
      });
    try {
      expect(await call(protobufSpans(60))).toBeNull();
      const over = await call(protobufSpans(60));
      expect(over?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(await app.traces.countSpans()).toBe(60);
    } finally {
      client.close();
      await server.close();
    }
  });
});

describe('IngestQuotas', () => {
  it('names, when several quotas refuse, the one that resets last', async () => {
    let now = NOON;
    const quotas = new IngestQuotas(new InProcessRateLimiter(() => now), {
      callerRecordsPerS: 10,
      callerBytesPerDay: 100,
      orgRecordsPerS: 0,
      orgBytesPerDay: 0,
    });
    const caller = { kind: 'user', orgId: 'o', userId: 'u' } as const;
    const verdict = await quotas.spend(caller, { records: 11, bytes: 101 });
    expect(verdict.quotas.map((q) => [q.name, q.exceeded, q.resetS])).toEqual([
      ['caller-records', true, 1],
      ['caller-bytes', true, 43200],
    ]);
    expect(verdict.refused?.name).toBe('caller-bytes');
    // The bytes refunded, the records not: this second is spent, the day is whole.
    expect((await quotas.spent(caller))?.name).toBe('caller-records');
    now += 1000;
    expect(await quotas.spent(caller)).toBeNull();
    const fits = await quotas.spend(caller, { records: 10, bytes: 100 });
    expect(fits.refused).toBeNull();
    expect(fits.quotas.map((q) => q.remaining)).toEqual([0, 0]);
  });
});

describe('configuration', () => {
  it('defaults no ordinary exporter meets; 0 turns a quota off; a quota below the largest request stops start-up', () => {
    expect(loadConfig({}).ingestQuotas).toEqual({
      callerRecordsPerS: 100_000,
      callerBytesPerDay: 10 * 1024 ** 3,
      orgRecordsPerS: 200_000,
      orgBytesPerDay: 20 * 1024 ** 3,
    });
    expect(loadConfig(OFF).ingestQuotas).toEqual({
      callerRecordsPerS: 0,
      callerBytesPerDay: 0,
      orgRecordsPerS: 0,
      orgBytesPerDay: 0,
    });
    expect(() => loadConfig({ INGEST_QUOTA_CALLER_RECORDS_PER_S: '9999' })).toThrow(
      new ConfigError('INGEST_QUOTA_CALLER_RECORDS_PER_S must be 0 (off) or at least OTLP_MAX_SPANS (10000), got 9999'),
    );
    expect(() => loadConfig({ INGEST_QUOTA_ORG_BYTES_PER_DAY: '1048576' })).toThrow(
      'INGEST_QUOTA_ORG_BYTES_PER_DAY must be 0 (off) or at least OTLP_MAX_DECOMPRESSED_BYTES (16777216), got 1048576',
    );
    expect(() => loadConfig({ INGEST_QUOTA_CALLER_BYTES_PER_DAY: 'lots' })).toThrow(ConfigError);
  });
});
