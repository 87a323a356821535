/**
 * The gRPC port's connections (src/grpc/connections.ts): over OTLP_GRPC_MAX_CONNECTIONS a
 * connection is closed as soon as it is accepted while the held ones keep working; a connection
 * without a call in flight is closed by the server after IDLE_TIMEOUT_MS, whether it sent nothing,
 * only the HTTP/2 preface, made a call that ended, or holds a stream no call runs on; one with a
 * call in flight is not.
 */
import type http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpGrpc, type OtlpGrpcServer } from '../../src/grpc/otlp-grpc.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { encodeExportRequest } from '../../src/otlp/traces/decode.ts';
import { otlpTraceBody } from '../fixtures/otlp-body.ts';
import { rawConnection, within } from '../helpers/raw-connection.ts';
import { grpcSession, rawCall, wholeCall } from '../helpers/raw-grpc.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const HANG_MS = 20_000;
const empty = encodeExportRequest(otlpTraceBody());

async function started(env: Record<string, string>) {
  const t = await startTestApp({ env });
  const metrics = createMetrics({ defaultMetrics: false });
  const server = await startOtlpGrpc(t.app, {
    config: t.config,
    port: 0,
    authenticate: (h) => t.authenticator.authenticate(h),
    registry: t.registry,
    metrics,
  });
  return { t, server, metrics };
}

async function closedCount(metrics: Metrics, reason: string): Promise<number> {
  const { values } = await metrics.connectionsClosed.get();
  return values.find((v) => v.labels.port === 'grpc' && v.labels.reason === reason)?.value ?? 0;
}

/** Resolves with the ms from now to the session's close, -1 past the deadline. */
function sessionClosed(s: http2.ClientHttp2Session): Promise<number> {
  const t0 = performance.now();
  return within(new Promise<number>((resolve) => s.once('close', () => resolve(performance.now() - t0))), HANG_MS, -1);
}

describe('over OTLP_GRPC_MAX_CONNECTIONS', () => {
  let t: TestApp;
  let server: OtlpGrpcServer;
  let metrics: Metrics;
  beforeAll(async () => {
    ({ t, server, metrics } = await started({ OTLP_GRPC_MAX_CONNECTIONS: '2', IDLE_TIMEOUT_MS: '600000' }));
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('a third connection is closed as it is accepted; the two held keep serving calls', async () => {
    const token = await t.token('u-admin');
    const held = [grpcSession(server.port), grpcSession(server.port)];
    for (const s of held) expect((await wholeCall(s, token, empty).answered).status).toBe(grpc.status.OK);
    const third = await rawConnection(server.port);
    // The idle timeout is ten minutes: only the cap can close it before the deadline.
    expect(await within(third.closed, HANG_MS, -1)).toBeGreaterThanOrEqual(0);
    expect(await closedCount(metrics, 'over_cap')).toBe(1);
    for (const s of held) expect((await wholeCall(s, token, empty).answered).status).toBe(grpc.status.OK);
    expect(server.connections()).toBe(2);
    for (const s of held) s.destroy();
  });
});

describe('idle connections', () => {
  const IDLE_MS = 400;
  const RECEIVE_MS = 3 * IDLE_MS;
  let t: TestApp;
  let server: OtlpGrpcServer;
  let metrics: Metrics;
  beforeAll(async () => {
    ({ t, server, metrics } = await started({
      IDLE_TIMEOUT_MS: String(IDLE_MS),
      REQUEST_TIMEOUT_MS: String(RECEIVE_MS),
    }));
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('one that sends nothing is closed after IDLE_TIMEOUT_MS', async () => {
    const c = await rawConnection(server.port);
    expect(await within(c.closed, HANG_MS, -1)).toBeGreaterThanOrEqual(IDLE_MS - 5);
    expect(await closedCount(metrics, 'idle')).toBeGreaterThanOrEqual(1);
  });

  it('an HTTP/2 connection that makes no call, and one whose call has ended, are closed after IDLE_TIMEOUT_MS', async () => {
    const none = grpcSession(server.port);
    const used = grpcSession(server.port);
    const closedNone = sessionClosed(none);
    const token = await t.token('u-admin');
    // Counted from before the call is sent: the server's idle time starts when the call ends, which
    // a busy client may learn of late (counting from the answer would shorten what it measures).
    const closedUsed = sessionClosed(used);
    expect((await wholeCall(used, token, empty).answered).status).toBe(grpc.status.OK);
    expect(await closedNone).toBeGreaterThanOrEqual(IDLE_MS - 5);
    expect(await closedUsed).toBeGreaterThanOrEqual(IDLE_MS - 5);
  });

  it('a stream no call runs on (an unknown method, answered and never ended by the peer) does not keep it open', async () => {
    const s = grpcSession(server.port);
    const stray = rawCall(s, { path: '/no.Such/Method' });
    expect((await stray.answered).status).toBe(grpc.status.UNIMPLEMENTED);
    expect(await sessionClosed(s)).toBeGreaterThanOrEqual(0);
  });

  it('one with a call in flight past IDLE_TIMEOUT_MS stays open until the call ends', async () => {
    const s = grpcSession(server.port);
    const closed = sessionClosed(s);
    // A message announced and not sent: the call is in flight until its receive deadline.
    const call = rawCall(s, { token: await t.token('u-admin'), announce: 1024 });
    const end = await call.answered;
    expect(end.status).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(await closed).toBeGreaterThanOrEqual(RECEIVE_MS + IDLE_MS - 5);
  });
});
