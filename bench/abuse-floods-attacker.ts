/**
 * The attacker of bench/abuse-floods.ts, in its own process (its own descriptors and event loop):
 *
 * - `idle <port> <count> tcp|h2`: opens `count` connections (at most 256 connecting at once) and
 *   sends nothing more (`h2`: the HTTP/2 preface and an empty SETTINGS frame, as a client that
 *   opens a channel and makes no call). Each connection's connect and close times are kept; on
 *   `report` it answers with what the server did, on `finish` it closes what is left and exits.
 * - `slow <port> <token> <connections> <calls> <bytes>`: opens `connections` HTTP/2 connections and
 *   on each `calls` OTLP trace Export calls, each announcing a `bytes` message and sending all but
 *   its last byte, never ending its stream; answers `report` with when each call was closed (its
 *   final status, or its stream or connection closed).
 */
import http2 from 'node:http2';
import net from 'node:net';

const [mode, portText, ...rest] = process.argv.slice(2) as [string, string, ...string[]];
const port = Number(portText);
const started = performance.now();
const now = () => performance.now() - started;

interface Conn {
  connectedAt: number;
  closedAt: number | null;
  byServer: boolean;
  socket: net.Socket | null;
}
const conns: Conn[] = [];
const connectErrors = new Map<string, number>();
let settled = 0;
let openedAllAt: number | null = null;

/** HTTP/2 client preface and an empty SETTINGS frame (RFC 9113 §3.4). */
const H2_PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

async function idle(count: number, h2: boolean): Promise<void> {
  let next = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      let conn: Conn | null = null;
      socket.on('connect', () => {
        conn = { connectedAt: now(), closedAt: null, byServer: false, socket };
        conns.push(conn);
        if (h2) socket.write(H2_PREFACE);
        resolve();
      });
      socket.resume();
      const closed = (byServer: boolean) => {
        if (conn === null || conn.closedAt !== null) return;
        conn.closedAt = now();
        conn.byServer = byServer;
        conn.socket = null;
      };
      socket.on('end', () => {
        closed(true);
        socket.destroy();
      });
      socket.on('error', (err: NodeJS.ErrnoException) => {
        if (conn === null) {
          connectErrors.set(err.code ?? err.message, (connectErrors.get(err.code ?? err.message) ?? 0) + 1);
          resolve();
        } else closed(err.code === 'ECONNRESET' || err.code === 'EPIPE');
      });
      socket.on('close', () => {
        closed(true);
      });
    });
  const worker = async () => {
    while (next < count) {
      next++;
      await one();
      settled++;
    }
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  openedAllAt = now();
}

function idleReport() {
  const byServer = conns.filter((c) => c.closedAt !== null && c.byServer);
  const lifetimes = byServer.map((c) => (c.closedAt as number) - c.connectedAt);
  return {
    attempted: settled,
    connected: conns.length,
    connectErrors: Object.fromEntries(connectErrors),
    openedAllMs: openedAllAt,
    open: conns.filter((c) => c.closedAt === null).length,
    lifetimesMs: lifetimes,
  };
}

interface Call {
  startedAt: number;
  closedAt: number | null;
  status: string | null;
}
const calls: Call[] = [];
const sessions: http2.ClientHttp2Session[] = [];

function slow(token: string, connections: number, perConnection: number, bytes: number): void {
  const body = Buffer.alloc(bytes - 1, 0x0a);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(bytes, 1);
  for (let c = 0; c < connections; c++) {
    // Node's client refuses its own new streams past 10 MB of queued data otherwise.
    const session = http2.connect(`http://127.0.0.1:${port}`, { maxSessionMemory: 4096 });
    session.on('error', () => undefined);
    sessions.push(session);
    for (let i = 0; i < perConnection; i++) {
      const call: Call = { startedAt: now(), closedAt: null, status: null };
      calls.push(call);
      const stream = session.request({
        ':method': 'POST',
        ':path': '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        'content-type': 'application/grpc',
        te: 'trailers',
        authorization: `Bearer ${token}`,
      });
      const done = (status: string | null) => {
        if (call.closedAt !== null) return;
        call.closedAt = now();
        call.status = status;
      };
      stream.on('response', (headers) => {
        const status = headers['grpc-status'];
        if (status !== undefined) done(String(status));
      });
      stream.on('trailers', (headers) => done(String(headers['grpc-status'] ?? '?')));
      stream.on('close', () => done(`closed (rst ${stream.rstCode})`));
      stream.on('error', () => undefined);
      stream.write(prefix);
      stream.write(body);
    }
  }
}

process.on('message', (m: { cmd: 'report' | 'finish' }) => {
  if (m.cmd === 'report') {
    process.send?.(mode === 'slow' ? { calls } : idleReport());
    return;
  }
  for (const c of conns) c.socket?.destroy();
  for (const s of sessions) s.destroy();
  process.send?.({ finished: true }, () => process.exit(0));
});
process.on('disconnect', () => process.exit(0));

if (mode === 'idle') {
  void idle(Number(rest[0]), rest[1] === 'h2');
} else {
  const [token, connections, perConnection, bytes] = rest as [string, string, string, string];
  slow(token, Number(connections), Number(perConnection), Number(bytes));
}
