/**
 * gRPC calls made by hand over Node's HTTP/2 client, so that a test can be the client a library
 * never is: one that announces a message and sends part of it, sends no message at all, or never
 * ends its stream; and see what the server does (its status, when it reset the stream).
 */
import http2 from 'node:http2';

const TRACE_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** An HTTP/2 connection to the gRPC port; a client that queues many megabytes needs more than Node's 10 MB. */
export function grpcSession(port: number): http2.ClientHttp2Session {
  const session = http2.connect(`http://127.0.0.1:${port}`, { maxSessionMemory: 1024 });
  session.on('error', () => undefined);
  return session;
}

interface CallEnd {
  /** `grpc-status` of the answer (trailers-only or trailers), null when none came. */
  status: number | null;
  message: string;
  /** The `grpc-status-details-bin` trailer, decoded from base64. */
  details: Buffer | null;
}

export interface RawCall {
  stream: http2.ClientHttp2Stream;
  /** The call's status, once the server has sent it. */
  answered: Promise<CallEnd>;
  /** The stream's RST_STREAM code once closed (0: closed without error). */
  closed: Promise<number>;
}

/**
 * Starts an Export call on `session`: `prefix` announces `announce` bytes (none when undefined),
 * then `body` is sent; the stream is ended only when `end` is true.
 */
export function rawCall(
  session: http2.ClientHttp2Session,
  options: { token?: string; path?: string; announce?: number; body?: Buffer; end?: boolean },
): RawCall {
  const stream = session.request({
    ':method': 'POST',
    ':path': options.path ?? TRACE_EXPORT,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}),
  });
  stream.on('error', () => undefined);
  const answered = new Promise<CallEnd>((resolve) => {
    const take = (headers: http2.IncomingHttpHeaders) => {
      const status = headers['grpc-status'];
      if (status === undefined) return false;
      const details = headers['grpc-status-details-bin'];
      resolve({
        status: Number(status),
        message: decodeURIComponent(String(headers['grpc-message'] ?? '')),
        details: typeof details === 'string' ? Buffer.from(details, 'base64') : null,
      });
      return true;
    };
    stream.on('response', take);
    stream.on('trailers', take);
    stream.on('close', () => resolve({ status: null, message: '', details: null }));
  });
  const closed = new Promise<number>((resolve) => {
    stream.on('close', () => resolve(stream.rstCode));
  });
  stream.resume();
  if (options.announce !== undefined) {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(options.announce, 1);
    stream.write(prefix);
  }
  if (options.body !== undefined) stream.write(options.body);
  if (options.end === true) stream.end();
  return { stream, answered, closed };
}

/** A whole Export call of `message` (ended). */
export function wholeCall(session: http2.ClientHttp2Session, token: string, message: Buffer): RawCall {
  return rawCall(session, { token, announce: message.length, body: message, end: true });
}
