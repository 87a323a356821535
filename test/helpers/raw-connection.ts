/**
 * A TCP connection a test drives byte by byte, to see what the server does with a client that
 * sends little or nothing: what it answered, whether and when the server closed it.
 */
import net from 'node:net';

export interface RawConnection {
  socket: net.Socket;
  /**
   * Milliseconds from the connect call to the server's close (its FIN or reset); resolves once closed.
   * Counted from before the server can accept, so it is never less than the server's own idle time.
   */
  closed: Promise<number>;
  /** Everything the server sent so far. */
  received(): string;
  isOpen(): boolean;
}

/** Resolves once connected. */
export async function rawConnection(port: number): Promise<RawConnection> {
  const connectingAt = performance.now();
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  let open = true;
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('data', (chunk: Buffer) => {
    data += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => {
    const done = () => {
      open = false;
      resolve(performance.now() - connectingAt);
    };
    socket.once('end', done);
    socket.once('close', done);
  });
  return { socket, closed, received: () => data, isOpen: () => open };
}

/** `promise`'s value, or `fallback` once `ms` have passed: a deadline for a condition, not a measure. */
export function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    void promise.then((v) => {
      clearTimeout(timer);
      resolve(v);
    });
  });
}
