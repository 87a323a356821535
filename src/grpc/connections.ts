/**
 * The gRPC port's listening socket, owned here rather than by grpc-js so that its connections are
 * held to the same rules as the HTTP port's, whatever a peer does at the HTTP/2 level:
 *
 * - at most `maxConnections` open, any more closed as soon as they are accepted (Node's
 *   `maxConnections`), each accepted one handed to grpc-js (its connection injector);
 * - a connection with no call in flight for `idleTimeoutMs` is closed. grpc-js's own idle timer
 *   (which sends a GOAWAY first, and runs too) counts HTTP/2 streams: a stream the server has
 *   answered but the peer never ends, or a connection that sent nothing, would keep it busy or
 *   late; calls are what the call guard counts;
 * - a call's connection can be cut: grpc-js ends a call with its status but keeps reading its
 *   stream, and the partial message it buffered, until the peer closes it, so closing the
 *   connection is what frees a slow sender's bytes.
 */
import net from 'node:net';

/** Where a call came from, as grpc-js reports it (`call.getConnectionInfo()`). */
interface Peer {
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}

/** What the call guard tells the connections about calls, and asks of them. */
export interface CallConnections {
  callStarted(peer: Peer): void;
  callEnded(peer: Peer): void;
  /** Closes the connection `peer` is on after `graceMs` (time for a status just sent to leave); false when it is gone. */
  cut(peer: Peer, graceMs: number): boolean;
}

export interface GrpcConnections extends CallConnections {
  /** Listens on the configured address, handing each accepted connection to `accept`; resolves with the port. */
  listen(accept: (socket: net.Socket) => void): Promise<number>;
  /** Connections open now. */
  count(): number;
  /** Stops accepting; open connections are grpc-js's to close. */
  close(): Promise<void>;
}

interface Connection {
  socket: net.Socket;
  calls: number;
  /** Running while no call is in flight. */
  idle: NodeJS.Timeout | null;
}

const keyOf = (address: string | undefined, port: number | undefined) => `${address ?? ''}|${String(port ?? '')}`;

export function grpcConnections(
  options: { host: string; port: number; maxConnections: number; idleTimeoutMs: number },
  hooks: { closed(reason: 'over_cap' | 'idle' | 'slow_sender'): void; onError(err: Error): void },
): GrpcConnections {
  let accept: (socket: net.Socket) => void = (socket) => socket.destroy();
  const open = new Map<string, Connection>();
  const startIdle = (c: Connection) => {
    c.idle = setTimeout(() => {
      hooks.closed('idle');
      c.socket.destroy();
    }, options.idleTimeoutMs);
    c.idle.unref();
  };
  const stopIdle = (c: Connection) => {
    if (c.idle !== null) clearTimeout(c.idle);
    c.idle = null;
  };
  const server = net.createServer((socket) => {
    const key = keyOf(socket.remoteAddress, socket.remotePort);
    const c: Connection = { socket, calls: 0, idle: null };
    startIdle(c);
    open.set(key, c);
    socket.once('close', () => {
      stopIdle(c);
      if (open.get(key) === c) open.delete(key);
    });
    accept(socket);
  });
  server.maxConnections = options.maxConnections;
  server.on('drop', () => {
    hooks.closed('over_cap');
  });
  const find = (peer: Peer) => open.get(keyOf(peer.remoteAddress, peer.remotePort));
  return {
    async listen(handOver) {
      accept = handOver;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      // An accept failing (EMFILE) is reported, never thrown out of the process.
      server.on('error', (err) => {
        hooks.onError(err);
      });
      return (server.address() as net.AddressInfo).port;
    },
    count: () => open.size,
    callStarted(peer) {
      const c = find(peer);
      if (c === undefined) return;
      c.calls += 1;
      stopIdle(c);
    },
    callEnded(peer) {
      const c = find(peer);
      if (c === undefined || c.calls === 0) return;
      c.calls -= 1;
      if (c.calls === 0 && !c.socket.destroyed) startIdle(c);
    },
    cut(peer, graceMs) {
      const c = find(peer);
      if (c === undefined) return false;
      hooks.closed('slow_sender');
      const timer = setTimeout(() => c.socket.destroy(), graceMs);
      timer.unref();
      return true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  };
}
