/**
 * Abuse of the logs and metrics receivers and of the gRPC port: the trace receiver's bounds hold
 * for them too (gzip bombs, more records or data points than a request may carry, deep JSON,
 * garbage protobuf, a gzip message over the bound on gRPC). Each is refused at once, storing nothing.
 */
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpGrpc, type OtlpGrpcServer } from '../../src/grpc/otlp-grpc.ts';
import { attr, otlpLogsBody, otlpMetricsBody } from '../fixtures/otlp-body.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const MiB = 1024 * 1024;
const MAX_RECORDS = 1000;
let t: TestApp;
let url: string;
let grpcServer: OtlpGrpcServer;
beforeAll(async () => {
  t = await startTestApp({ env: { OTLP_MAX_SPANS: String(MAX_RECORDS) } });
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  grpcServer = await startOtlpGrpc(t.app, {
    config: t.config,
    port: 0,
    authenticate: (h) => t.authenticator.authenticate(h),
    registry: t.registry,
  });
});
afterAll(async () => {
  await grpcServer.close();
  await t.close();
});

async function post(signal: string, body: Buffer | string, opts: { gzip?: boolean; protobuf?: boolean } = {}) {
  const res = await fetch(`${url}/v1/${signal}`, {
    method: 'POST',
    body: opts.gzip === true ? zlib.gzipSync(body) : body,
    headers: {
      ...(await t.auth('u-admin')),
      'content-type': opts.protobuf === true ? 'application/x-protobuf' : 'application/json',
      ...(opts.gzip === true ? { 'content-encoding': 'gzip' } : {}),
    },
  });
  return { status: res.status, text: await res.text() };
}

const record = (i: number) => ({
  timeUnixNano: `${1_700_000_000 + i}000000000`,
  body: { stringValue: 'claude_code.api_request' },
  attributes: [attr('prompt.id', `p-${i}`)],
});
const logs = (n: number) => JSON.stringify(otlpLogsBody({ records: Array.from({ length: n }, (_, i) => record(i)) }));
const points = (n: number) =>
  JSON.stringify(
    otlpMetricsBody({
      metrics: [{ name: 'm', sum: { dataPoints: Array.from({ length: n }, () => ({ asInt: '1' })) } }],
    }),
  );

describe.each(['logs', 'metrics'])('POST /v1/%s under abuse', (signal) => {
  it('a gzip bomb (61 KB inflating to 60 MB) is refused with 400 and an OTLP Status', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(60 * MiB, '['), { level: 9 });
    const res = await fetch(`${url}/v1/${signal}`, {
      method: 'POST',
      body: bomb,
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 3, message: `the body inflates to more than ${16 * MiB} bytes` });
  });

  it('brackets nested past 64 levels are refused before parsing', async () => {
    const res = await post(signal, Buffer.alloc(MiB, '['), { gzip: true });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(/deeper than 64 levels/);
  });

  it('garbage protobuf is a 400 with a protobuf Status, never a 500', async () => {
    const res = await post(signal, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), { protobuf: true });
    expect(res.status).toBe(400);
  });

  it(`more than ${MAX_RECORDS} records or data points are refused as a whole, storing nothing`, async () => {
    const before = await t.traces.countSpans();
    const res = await post(signal, signal === 'logs' ? logs(MAX_RECORDS + 1) : points(MAX_RECORDS + 1), {
      gzip: true,
    });
    expect(res.status).toBe(400);
    const what = signal === 'logs' ? 'log records' : 'data points';
    expect(JSON.parse(res.text)).toEqual({
      code: 3,
      message: `the request carries more than ${MAX_RECORDS} ${what}; send at most ${MAX_RECORDS} per request`,
    });
    expect(await t.traces.countSpans()).toBe(before);
  });
});

describe('the OTLP routes read only the two OTLP encodings', () => {
  it.each(['traces', 'logs', 'metrics'])(
    '/v1/%s: another JSON media type is 415 before anything is parsed (a 22-byte {"length":…} once allocated gigabytes)',
    async (signal) => {
      for (const [type, body] of [
        ['application/vnd.x+json', '{"length":150000000}'],
        ['application/merge-patch+json', '1e10'],
        ['text/plain', '1e15'],
      ] as const) {
        const res = await fetch(`${url}/v1/${signal}`, {
          method: 'POST',
          body,
          headers: { ...(await t.auth('u-admin')), 'content-type': type },
        });
        expect(res.status, type).toBe(415);
        expect(((await res.json()) as { code: string }).code).toBe('unsupported_content_type');
      }
    },
  );
});

describe('protobuf logs and metrics are bounded while they are read', () => {
  // Field 1 (resource_logs / resource_metrics), 2 (scope_*), 2 (log_records / metrics), …: empty
  // messages cost two bytes each, so 16 MiB holds millions of them.
  const len = (field: number, payload: Buffer) => {
    const header: number[] = [(field << 3) | 2];
    let n = payload.length;
    while (n > 127) {
      header.push((n & 127) | 128);
      n >>>= 7;
    }
    header.push(n);
    return Buffer.concat([Buffer.from(header), payload]);
  };
  const empties = (field: number, count: number) => Buffer.alloc(2 * count, Buffer.from([(field << 3) | 2, 0]));

  it('8 million empty log records: 400 as soon as the record limit is passed', async () => {
    const body = len(1, len(2, empties(2, 8_000_000)));
    const res = await post('logs', body, { gzip: true, protobuf: true });
    expect(res.status).toBe(400);
  });

  it('a log record with more than 128 distinct attributes: 400', async () => {
    const attrs = Array.from({ length: 129 }, (_, i) => len(6, len(1, Buffer.from(`k${i}`))));
    const res = await post('logs', len(1, len(2, len(2, Buffer.concat(attrs)))), { protobuf: true });
    expect(res.status).toBe(400);
    expect(res.text).toContain('a log record with more than 128 attributes');
  });

  it('the same record in OTLP/JSON gets the same 400', async () => {
    const attributes = Array.from({ length: 129 }, (_, i) => attr(`k${i}`, 'v'));
    const res = await post('logs', JSON.stringify(otlpLogsBody({ records: [{ attributes }] })));
    expect(res.status).toBe(400);
    expect(res.text).toContain('a log record with more than 128 attributes');
  });

  it('8 million empty metric data points: 400 as soon as the limit is passed', async () => {
    const body = len(1, len(2, len(2, len(7, empties(1, 8_000_000)))));
    const res = await post('metrics', body, { gzip: true, protobuf: true });
    expect(res.status).toBe(400);
  });

  it('a duration of 1e303 ms is a rejected record in the partial success, not a 500', async () => {
    const res = await post(
      'logs',
      JSON.stringify(
        otlpLogsBody({
          records: [
            {
              timeUnixNano: '1700000000000000000',
              body: { stringValue: 'claude_code.api_request' },
              attributes: [attr('duration_ms', '1e303')],
            },
          ],
        }),
      ),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).partialSuccess.rejectedLogRecords).toBe(1);
  });
});

describe('OTLP over gRPC under abuse', () => {
  it('calls without a valid token are refused before their message is read: 40 gzip bombs cost no memory', async () => {
    const client = new grpc.Client(`127.0.0.1:${grpcServer.port}`, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
    });
    const before = process.memoryUsage().rss;
    const call = (token: string | null) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        const metadata = new grpc.Metadata();
        if (token !== null) metadata.set('authorization', `Bearer ${token}`);
        client.makeUnaryRequest(
          '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(16 * MiB - 1024),
          metadata,
          (err) => {
            resolve(err);
          },
        );
      });
    const errors = await Promise.all(Array.from({ length: 40 }, (_, i) => call(i % 2 === 0 ? null : 'not-a-jwt')));
    client.close();
    // Each is refused: by the token check, or by HTTP/2's own memory limit when many streams send
    // at once; none is answered, none gets its message inflated.
    const codes = errors.map((e) => e?.code);
    expect(codes.every((c) => c === grpc.status.UNAUTHENTICATED || c === grpc.status.RESOURCE_EXHAUSTED)).toBe(true);
    const details = errors.filter((e) => e?.code === grpc.status.UNAUTHENTICATED).map((e) => e?.details);
    expect(details.length).toBeGreaterThan(0);
    for (const d of details) expect(d).toMatch(/^(token_missing|token_malformed): /);
    // Before: 16 MiB inflated per call, ~2.4 GB resident after 100 calls.
    expect((process.memoryUsage().rss - before) / MiB).toBeLessThan(200);
  });

  it('a gzip message that inflates past the bound is refused with RESOURCE_EXHAUSTED', async () => {
    const client = new grpc.Client(`127.0.0.1:${grpcServer.port}`, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
    });
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${await t.token('u-admin')}`);
    const error = await new Promise<grpc.ServiceError | null>((resolve) => {
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(40 * MiB),
        metadata,
        (err) => {
          resolve(err);
        },
      );
    });
    client.close();
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });
});
