/**
 * The HTTP port's connections (src/rest/connections.ts, app.ts's server options): over the cap a
 * connection is closed as soon as it is accepted, while the held ones keep working; a connection
 * that sends nothing is closed by the server after IDLE_TIMEOUT_MS, but one whose request is still
 * being worked on is not; headers trickled byte by byte are cut at the request deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { rawConnection, within, type RawConnection } from '../helpers/raw-connection.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** Far longer than any of these waits should take: a deadline for a hang, not a measure. */
const HANG_MS = 20_000;

async function metric(t: TestApp, reason: string): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  const line = res.body
    .split('\n')
    .find((l) => l.startsWith(`gateway_connections_closed_total{port="http",reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

/** GET /healthz written on `c` (a keep-alive request); resolves with the status line. */
async function healthz(c: RawConnection): Promise<string> {
  const before = c.received().length;
  c.socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
  for (;;) {
    const text = c.received().slice(before);
    if (text.includes('\r\n\r\n') && text.includes('"status":"ok"')) return text.split('\r\n')[0] ?? '';
    if (!c.isOpen()) return `closed after ${JSON.stringify(text)}`;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('over HTTP_MAX_CONNECTIONS', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({ env: { HTTP_MAX_CONNECTIONS: '3', IDLE_TIMEOUT_MS: '600000' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await t.close();
  });

  it('a fourth connection is closed as it is accepted; the three held keep working; a freed slot takes a new one', async () => {
    const held = [await rawConnection(port), await rawConnection(port), await rawConnection(port)];
    const fourth = await rawConnection(port);
    // The idle timeout is ten minutes: only the cap can close it before the deadline.
    expect(await within(fourth.closed, HANG_MS, -1)).toBeGreaterThanOrEqual(0);
    expect(fourth.received()).toBe('');
    for (const c of held) expect(await healthz(c)).toBe('HTTP/1.1 200 OK');
    expect(await metric(t, 'over_cap')).toBe(1);

    held[0]?.socket.destroy();
    // The server frees the slot once it has seen the close: retry until a new connection is kept.
    let next: RawConnection | null = null;
    const deadline = Date.now() + HANG_MS;
    while (next === null && Date.now() < deadline) {
      const c = await rawConnection(port);
      if ((await healthz(c)) === 'HTTP/1.1 200 OK') next = c;
    }
    expect(next).not.toBeNull();
    for (const c of [...held, next]) c?.socket.destroy();
  });
});

describe('idle, slow and busy connections', () => {
  const IDLE_MS = 300;
  const DEADLINE_MS = 1500;
  let t: TestApp;
  let port: number;
  /** How long the tool list's store call takes (the socket is silent meanwhile). */
  let slowListMs = 0;
  const slowList = (store: RegistryStore): RegistryStore =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (prop !== 'findArtifacts' && prop !== 'findReadyArtifacts') return value.bind(target);
        return async (...args: unknown[]) => {
          await new Promise((r) => setTimeout(r, slowListMs));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  beforeAll(async () => {
    t = await startTestApp({
      env: { IDLE_TIMEOUT_MS: String(IDLE_MS), REQUEST_TIMEOUT_MS: String(DEADLINE_MS) },
      wrapRegistry: slowList,
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await t.close();
  });

  it('a connection that sends nothing is closed by the server after IDLE_TIMEOUT_MS', async () => {
    const c = await rawConnection(port);
    const lifetime = await within(c.closed, HANG_MS, -1);
    expect(lifetime).toBeGreaterThanOrEqual(IDLE_MS - 5);
    expect(c.received()).toBe('');
    expect(await metric(t, 'idle')).toBeGreaterThanOrEqual(1);
  });

  it('a request worked on longer than the idle timeout, the socket silent meanwhile, is answered', async () => {
    slowListMs = 3 * IDLE_MS;
    const c = await rawConnection(port);
    c.socket.write(
      `GET /mcp/v1/tools?limit=1 HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${await t.token('u-admin')}\r\n\r\n`,
    );
    const answered = await within(
      (async () => {
        while (!c.received().includes('\r\n\r\n') && c.isOpen()) await new Promise((r) => setTimeout(r, 10));
        return c.received().split('\r\n')[0] ?? '';
      })(),
      HANG_MS,
      'no answer',
    );
    slowListMs = 0;
    expect(answered).toBe('HTTP/1.1 200 OK');
    c.socket.destroy();
  });

  it('headers trickled a byte at a time are cut at the request deadline with a problem, then closed', async () => {
    const c = await rawConnection(port);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n');
    // A byte every 50 ms keeps the socket from being idle: only the headers timeout can end it.
    const trickle = setInterval(() => c.socket.write('x'), 50);
    const lifetime = await within(c.closed, HANG_MS, -1);
    clearInterval(trickle);
    expect(lifetime).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    const [head, body] = c.received().split('\r\n\r\n') as [string, string];
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(body)).toMatchObject({
      code: 'invalid_request',
      status: 400,
      detail: 'the HTTP request was not received in time',
    });
  });
});
