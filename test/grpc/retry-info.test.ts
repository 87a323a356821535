/**
 * A refusal that says when to come back reaches a gRPC client as the OTLP specification asks:
 * an HTTP 429 or 503 with Retry-After is RESOURCE_EXHAUSTED or UNAVAILABLE with a
 * google.rpc.RetryInfo (in `grpc-status-details-bin`, read here with googleapis' definitions);
 * without Retry-After there is no RetryInfo; a registry that cannot answer when the right to
 * ingest is checked is UNAVAILABLE with the HTTP answer's 5 s.
 */
import * as grpc from '@grpc/grpc-js';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryAfterSeconds } from '../../src/grpc/grpc-status.ts';
import { startOtlpGrpc, type OtlpGrpcServer } from '../../src/grpc/otlp-grpc.ts';
import { StoreUnavailableError, type RegistryStore } from '../../src/store/registry-port.ts';
import { encodeExportRequest } from '../../src/otlp/traces/decode.ts';
import { otlpTraceBody } from '../fixtures/otlp-body.ts';
import { decodeRetryDelay } from '../helpers/retry-info.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let routes: FastifyInstance;
const servers: OtlpGrpcServer[] = [];
const clients: grpc.Client[] = [];

/** The HTTP receiver's routes answering as a quota or an overloaded service would. */
async function refusingRoutes(): Promise<FastifyInstance> {
  const app = Fastify();
  const problem = (status: number, code: string, title: string) => ({
    code,
    title,
    detail: 'retry later',
    status,
    trace_id: '0'.repeat(31) + '1',
  });
  app.addContentTypeParser('application/x-protobuf', { parseAs: 'buffer' }, (_r, body, done) => {
    done(null, body);
  });
  app.post('/v1/traces', async (_r, reply) =>
    reply
      .code(429)
      .header('retry-after', '7')
      .type('application/problem+json')
      .send(problem(429, 'rate_limited', 'Rate limit exceeded')),
  );
  app.post('/v1/logs', async (_r, reply) =>
    reply
      .code(503)
      .header('retry-after', '3')
      .type('application/problem+json')
      .send(problem(503, 'service_overloaded', 'Service overloaded')),
  );
  app.post('/v1/metrics', async (_r, reply) =>
    reply
      .code(503)
      .type('application/problem+json')
      .send(problem(503, 'service_unavailable', 'Service unavailable')),
  );
  await app.ready();
  return app;
}

async function serve(app: FastifyInstance, registry: RegistryStore): Promise<grpc.Client> {
  const server = await startOtlpGrpc(app, {
    config: t.config,
    port: 0,
    authenticate: (h) => t.authenticator.authenticate(h),
    registry,
  });
  servers.push(server);
  const client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  clients.push(client);
  return client;
}

function exportCall(client: grpc.Client, service: string, token: string): Promise<grpc.ServiceError> {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      `/opentelemetry.proto.collector.${service}/Export`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      encodeExportRequest(otlpTraceBody()),
      metadata,
      (error) => {
        if (error) resolve(error);
        else reject(new Error('the call succeeded'));
      },
    );
  });
}

const retryOf = (error: grpc.ServiceError) =>
  decodeRetryDelay(error.metadata.get('grpc-status-details-bin')[0] as Buffer | undefined);

beforeAll(async () => {
  t = await startTestApp();
  routes = await refusingRoutes();
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of servers) await s.close();
  await routes.close();
  await t.close();
});

describe('RetryInfo in gRPC status details', () => {
  it('HTTP 429 with Retry-After: RESOURCE_EXHAUSTED with a RetryInfo of its seconds', async () => {
    const error = await exportCall(await serve(routes, t.registry), 'trace.v1.TraceService', await t.token('u-admin'));
    expect(error.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error.details).toBe('Rate limit exceeded: retry later');
    expect(retryOf(error)).toEqual({ code: grpc.status.RESOURCE_EXHAUSTED, seconds: 7 });
  });

  it('HTTP 503 with Retry-After: UNAVAILABLE with a RetryInfo; without Retry-After, no status details', async () => {
    const client = await serve(routes, t.registry);
    const token = await t.token('u-admin');
    const overloaded = await exportCall(client, 'logs.v1.LogsService', token);
    expect(overloaded.code).toBe(grpc.status.UNAVAILABLE);
    expect(retryOf(overloaded)).toEqual({ code: grpc.status.UNAVAILABLE, seconds: 3 });
    const plain = await exportCall(client, 'metrics.v1.MetricsService', token);
    expect(plain.code).toBe(grpc.status.UNAVAILABLE);
    expect(plain.metadata.get('grpc-status-details-bin')).toEqual([]);
  });

  it('the registry unavailable while the right to ingest is checked: UNAVAILABLE with a RetryInfo of 5 s', async () => {
    const down = new Proxy(t.registry, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return () => Promise.reject(new StoreUnavailableError());
      },
    });
    const error = await exportCall(await serve(t.app, down), 'trace.v1.TraceService', await t.token('u-admin'));
    expect(error.code).toBe(grpc.status.UNAVAILABLE);
    expect(error.details).toBe('the registry store is unavailable; retry later');
    expect(retryOf(error)).toEqual({ code: grpc.status.UNAVAILABLE, seconds: 5 });
  });

  it('Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterSeconds('120')).toBe(120);
    expect(retryAfterSeconds(new Date(Date.now() + 30_500).toUTCString())).toBeGreaterThanOrEqual(30);
    expect(retryAfterSeconds(new Date(Date.now() - 60_000).toUTCString())).toBe(0);
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds(undefined)).toBeUndefined();
  });
});
