/**
 * Abuse of the logs and metrics receivers and of the gRPC port: the trace receiver's bounds hold
 * for them too (gzip bombs, more records or data points than a request may carry, deep JSON,
 * garbage protobuf, a gzip message over the bound on gRPC). Each is refused at once, storing nothing.
 */
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpGrpc, type OtlpGrpcServer } from '../../src/grpc/otlp-grpc.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const MiB = 1024 * 1024;
const MAX_RECORDS = 1000;
let t: TestApp;
let url: string;
let grpcServer: OtlpGrpcServer;
beforeAll(async () => {
  t = await startTestApp({ env: { OTLP_MAX_SPANS: String(MAX_RECORDS) } });
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  grpcServer = await startOtlpGrpc(t.app, { host: '127.0.0.1', port: 0, maxMessageBytes: 16 * MiB });
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
  attributes: [{ key: 'prompt.id', value: { stringValue: `p-${i}` } }],
});
const logs = (n: number) =>
  JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: n }, (_, i) => record(i)) }] }] });
const points = (n: number) =>
  JSON.stringify({
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [{ name: 'm', sum: { dataPoints: Array.from({ length: n }, () => ({ asInt: '1' })) } }],
          },
        ],
      },
    ],
  });

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

describe('OTLP over gRPC under abuse', () => {
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
