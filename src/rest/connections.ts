/**
 * The HTTP port's connections (docs/deployment.md "Connections"): at most `maxConnections` open,
 * any more closed as soon as they are accepted (Node's `maxConnections`: accepted and closed, not
 * left in the backlog), so that a flood uses no more descriptors than the cap; a connection silent
 * for `idleTimeoutMs` with no request in progress is closed by the server. Timeouts Node keeps per
 * request (headers, whole request, keep-alive) are set in app.ts's server options.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface HttpConnectionLimits {
  maxConnections: number;
  /** The socket's inactivity timeout (Fastify's `connectionTimeout`, which app.ts sets to this). */
  idleTimeoutMs: number;
  /**
   * Silence allowed on a socket whose request is still being answered, after the idle timeout:
   * a handler may work that long without writing (the request deadline answers before it ends).
   */
  busyGraceMs: number;
}

interface SocketState {
  requests: number;
  /** The grace of a busy socket was given since its last request started: its next timeout closes it. */
  graced: boolean;
}

/**
 * Applies the cap and the idle rule to `server`, reporting each closed connection to `closed`
 * (over the cap, or idle). Errors the listening socket reports (an accept failing with EMFILE)
 * go to `onError`: nothing the network does throws out of the process.
 */
export function guardHttpConnections(
  server: Server,
  limits: HttpConnectionLimits,
  hooks: { closed(reason: 'over_cap' | 'idle'): void; onError(err: Error): void },
): void {
  server.maxConnections = limits.maxConnections;
  server.on('drop', () => {
    hooks.closed('over_cap');
  });
  // Once listening: an error before that (the port in use) is the listen call's to report.
  server.once('listening', () =>
    server.on('error', (err) => {
      hooks.onError(err);
    }),
  );

  const sockets = new WeakMap<Socket, SocketState>();
  server.on('request', (req, res: ServerResponse) => {
    const state = sockets.get(req.socket) ?? { requests: 0, graced: false };
    state.requests += 1;
    state.graced = false;
    sockets.set(req.socket, state);
    res.once('close', () => {
      state.requests -= 1;
    });
  });
  // With a 'timeout' listener Node leaves the decision here (it would destroy every silent socket,
  // a request still being worked on included). Keep-alive timeouts arrive here too.
  server.on('timeout', (socket: Socket) => {
    const state = sockets.get(socket);
    if (state !== undefined && state.requests > 0 && !state.graced) {
      state.graced = true;
      socket.setTimeout(limits.busyGraceMs);
      return;
    }
    hooks.closed('idle');
    socket.destroy();
  });
}
