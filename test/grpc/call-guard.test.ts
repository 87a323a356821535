/**
 * What a gRPC call passes before its message is read (src/grpc/call-guard.ts), with hand-made
 * HTTP/2 clients: a slow sender is cut at its receive deadline and its buffered bytes freed while
 * its connection's other calls go on; calls receiving a message are capped per caller (the others
 * wait, unread; too many waiting are RESOURCE_EXHAUSTED with a RetryInfo) and calls per connection
 * too (HTTP/2 REFUSED_STREAM); a caller who may not ingest is refused
 * PERMISSION_DENIED without sending a byte of message, and the route never runs.
 */
import type http2 from 'node:http2';
import v8 from 'node:v8';
import vm from 'node:vm';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpGrpc, type OtlpGrpcServer } from '../../src/grpc/otlp-grpc.ts';
import { MAX_WAITING_PER_CALLER } from '../../src/grpc/call-guard.ts';
import { encodeExportRequest } from '../../src/otlp/traces/decode.ts';
import { otlpTraceBody } from '../fixtures/otlp-body.ts';
import { within } from '../helpers/raw-connection.ts';
import { grpcSession, rawCall, wholeCall } from '../helpers/raw-grpc.ts';
import { decodeRetryDelay } from '../helpers/retry-info.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const RECEIVE_MS = 1500;
const HANG_MS = 20_000;
const MiB = 1024 * 1024;
const NO_ERROR = 0;
const REFUSED_STREAM = 7;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
/** Bytes of ArrayBuffers held once everything unreachable has been collected. */
async function heldBuffers(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  return process.memoryUsage().arrayBuffers;
}

let t: TestApp;
let server: OtlpGrpcServer;
const sessions: http2.ClientHttp2Session[] = [];
const session = () => {
  const s = grpcSession(server.port);
  sessions.push(s);
  return s;
};
const empty = encodeExportRequest(otlpTraceBody());

beforeAll(async () => {
  t = await startTestApp({
    env: { REQUEST_TIMEOUT_MS: String(RECEIVE_MS), OTLP_GRPC_CALLS_PER_CALLER: '2', IDLE_TIMEOUT_MS: '600000' },
  });
  server = await startOtlpGrpc(t.app, {
    config: t.config,
    port: 0,
    authenticate: (h) => t.authenticator.authenticate(h),
    registry: t.registry,
  });
});
afterAll(async () => {
  for (const s of sessions) s.destroy();
  await server.close();
  await t.close();
});

describe('receive deadline', () => {
  it('a slow sender is answered DEADLINE_EXCEEDED at REQUEST_TIMEOUT_MS and its stream reset; its bytes are freed; its connection serves on', async () => {
    const token = await t.token('u-admin');
    const body = Buffer.alloc(8 * MiB - 1, 0x0a);
    const before = await heldBuffers();
    const s = session();
    const startedAt = performance.now();
    const slow = rawCall(s, { token, announce: 8 * MiB, body });
    // The server holds what it received: wait until it has it all (bounded by the deadline anyway).
    const received = await within(
      (async () => {
        while (process.memoryUsage().arrayBuffers < before + 7 * MiB) await new Promise((r) => setTimeout(r, 10));
        return true;
      })(),
      HANG_MS,
      false,
    );
    expect(received).toBe(true);
    // Another call on the same connection meanwhile is answered as usual.
    expect((await wholeCall(s, token, empty).answered).status).toBe(grpc.status.OK);

    const end = await slow.answered;
    expect(end.status).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(end.message).toBe(`the request was not received within ${RECEIVE_MS} ms of the call's start`);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(RECEIVE_MS - 5);
    // Reset by the server (its stream, not its connection): the sender cannot go on sending.
    expect(await within(slow.closed, HANG_MS, -1)).toBe(NO_ERROR);
    expect(s.closed || s.destroyed).toBe(false);
    expect((await wholeCall(s, token, empty).answered).status).toBe(grpc.status.OK);
    expect(await heldBuffers()).toBeLessThan(before + MiB);
  });
});

describe('calls in flight', () => {
  it('per caller: over OTLP_GRPC_CALLS_PER_CALLER receiving, a call waits unread until a place frees; another caller is not held back', async () => {
    const admin = await t.token('u-admin');
    // Two calls of one caller on two connections, each holding its place (a message announced, not sent).
    const held = [0, 1].map(() => rawCall(session(), { token: admin, announce: MiB }));
    // A whole call waits once both places are taken by calls still receiving. The held calls are
    // authorized asynchronously: whole calls made before they hold their places are answered (and
    // give their places up at once), so probe until one waits.
    let third = wholeCall(session(), admin, empty);
    for (let i = 0; i < 50 && (await within(third.answered, 300, null)) !== null; i++)
      third = wholeCall(session(), admin, empty);
    expect(await within(third.answered, 300, null)).toBeNull();
    // Another caller is not held back.
    const other = await t.token('u-b', 'org-b');
    expect((await wholeCall(session(), other, empty).answered).status).toBe(grpc.status.OK);
    // One held call ends (its client cancels it): the waiting call takes its place and is answered.
    held[0]?.stream.close();
    expect((await within(third.answered, HANG_MS, null))?.status).toBe(grpc.status.OK);
    // A call that has received its message gives its place up: whole calls go on while one place is held.
    for (let i = 0; i < 3; i++) expect((await wholeCall(session(), admin, empty).answered).status).toBe(grpc.status.OK);
    held[1]?.stream.close();
  });

  it(`per caller: over ${MAX_WAITING_PER_CALLER} calls waiting, a call is RESOURCE_EXHAUSTED with a RetryInfo before its message is read`, async () => {
    const admin = await t.token('u-admin');
    // 2 places + 64 waiting + 1: 67 calls announcing a message they never send, 8 per connection.
    // Authorization is asynchronous, so which call is the one too many is not known in advance.
    const calls: ReturnType<typeof rawCall>[] = [];
    for (let c = 0; c * 8 < 2 + MAX_WAITING_PER_CALLER + 1; c++) {
      const s = session();
      for (let i = 0; i < 8 && calls.length < 2 + MAX_WAITING_PER_CALLER + 1; i++)
        calls.push(rawCall(s, { token: admin, announce: MiB }));
    }
    const ends = await Promise.all(calls.map((c) => within(c.answered, HANG_MS, null)));
    const refused = ends.filter((e) => e?.status === grpc.status.RESOURCE_EXHAUSTED);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.message).toBe(
      `the caller has ${MAX_WAITING_PER_CALLER} calls waiting to be received already; retry when they have been`,
    );
    expect(decodeRetryDelay(refused[0]?.details)).toEqual({ code: grpc.status.RESOURCE_EXHAUSTED, seconds: 1 });
    // Every other call ended at its receive deadline, never having been read.
    expect(ends.filter((e) => e?.status === grpc.status.DEADLINE_EXCEEDED)).toHaveLength(calls.length - 1);
  });

  it('per connection: a ninth stream at once is refused by HTTP/2 (REFUSED_STREAM) before a call starts', async () => {
    const s = session();
    // Sent together, before the server's SETTINGS can reach the client, so the server must refuse.
    const calls = Array.from({ length: 9 }, () => rawCall(s, {}));
    const ends = await Promise.all(calls.map((c) => c.answered));
    expect(ends.slice(0, 8).map((e) => e.status)).toEqual(Array(8).fill(grpc.status.UNAUTHENTICATED));
    expect(ends[8]?.status).toBeNull();
    expect(await calls[8]?.closed).toBe(REFUSED_STREAM);
  });
});

describe('the right to ingest, before a message is read', () => {
  it('a viewer (no workspace to write to) is refused PERMISSION_DENIED having sent no message, and the route never runs', async () => {
    const viewer = rawCall(session(), { token: await t.token('u-viewer') });
    const end = await viewer.answered;
    expect(end).toEqual({
      status: grpc.status.PERMISSION_DENIED,
      message: 'access_denied: the caller may not create content in any workspace',
      details: null,
    });
    expect(await within(viewer.closed, HANG_MS, -1)).toBe(NO_ERROR);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).not.toContain('route="/v1/traces",status="403"');
  });
});
