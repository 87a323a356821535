/**
 * What every gRPC call passes before grpc-js reads its message (the interceptor runs when the
 * call's metadata arrives; grpc-js reads the stream only once it lets the metadata through):
 *
 * - the caller is authenticated and may ingest (the HTTP receiver's rule, `assertCanIngest`: it may
 *   create content in some workspace), or the call ends UNAUTHENTICATED / PERMISSION_DENIED
 *   having read nothing;
 * - the caller has fewer than `callsPerCaller` calls in flight on this process, or the call ends
 *   RESOURCE_EXHAUSTED with a RetryInfo (every call can hold a whole message in memory);
 * - the whole request (message and end of stream) arrives within `receiveTimeoutMs` of the call's
 *   start, or the call ends DEADLINE_EXCEEDED.
 *
 * A call this guard ends is also reset (RST_STREAM NO_ERROR, after its status: RFC 9113 §8.1 lets
 * a server stop a request it has answered). grpc-js's own way to end a call, its status, keeps
 * reading the stream until the peer ends it, and keeps the part of a message it had buffered: a
 * slow sender's bytes would stay, and a refused caller could keep streaming data the server reads
 * and drops. Resetting frees them and stops the peer at once.
 *
 * Calls per connection are HTTP/2's `max_concurrent_streams` (otlp-grpc.ts): streams over it are
 * refused by the HTTP/2 layer before any of this runs.
 */
import type { Http2Stream } from 'node:http2';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { grpcStatus, statusOfError, type GrpcStatus } from './grpc-status.ts';
import type { CallConnections } from './connections.ts';

/** Resolves the caller's key (call counts) when the credential is valid and may ingest; throws otherwise. */
export type Authorize = (authorization: string | undefined) => Promise<string>;

export interface CallGuardOptions {
  authorize: Authorize;
  callsPerCaller: number;
  receiveTimeoutMs: number;
  /** Told of every call (a connection without calls is idle); closes a slow sender's connection when its call cannot be reset. */
  connections: CallConnections;
  /** A failure inside the guard's own timers (never expected), reported instead of thrown. */
  onError(err: unknown): void;
}

/** How soon a caller over its call cap may try again: calls end within the request deadlines. */
const CALLS_RETRY_AFTER_S = 1;
/** Time for a status just sent to leave before a connection is closed (when a call cannot be reset). */
const CUT_GRACE_MS = 200;

/**
 * The HTTP/2 stream of a call, as grpc-js's base call keeps it (the call the first interceptor of
 * the list receives; the field is private, `stream` in grpc-js 1.10 to 1.14, and
 * test/grpc/call-guard.test.ts fails when it moves). Null where it is not found: a slow sender's
 * connection is then closed instead, and a refused call's stream is left to grpc-js.
 */
function streamOf(call: grpc.ServerInterceptingCallInterface): Http2Stream | null {
  const stream = (call as unknown as { stream?: unknown }).stream;
  return stream instanceof Object && 'rstCode' in stream && typeof (stream as Http2Stream).close === 'function'
    ? (stream as Http2Stream)
    : null;
}

export function callGuard(options: CallGuardOptions): grpc.ServerInterceptor {
  const inFlight = new Map<string, number>();
  const acquire = (key: string): boolean => {
    const n = inFlight.get(key) ?? 0;
    if (n >= options.callsPerCaller) return false;
    inFlight.set(key, n + 1);
    return true;
  };
  const release = (key: string) => {
    const n = (inFlight.get(key) ?? 1) - 1;
    if (n <= 0) inFlight.delete(key);
    else inFlight.set(key, n);
  };

  return (_method, call) => {
    const peer = call.getConnectionInfo();
    const stream = streamOf(call);
    options.connections.callStarted(peer);
    let ended = false;
    let slot: string | null = null;
    const end = () => {
      if (ended) return;
      ended = true;
      clearTimeout(receiveTimer);
      if (slot !== null) release(slot);
      options.connections.callEnded(peer);
    };
    /**
     * Ends the call from here (`call` is the next layer down, so this interceptor's responder does
     * not see it) and resets its stream once the status has been handed to HTTP/2.
     */
    const refuse = (status: GrpcStatus, cutIfUnresettable = false) => {
      end();
      call.sendStatus(status);
      if (stream === null) {
        if (cutIfUnresettable) options.connections.cut(peer, CUT_GRACE_MS);
        return;
      }
      setImmediate(() => {
        try {
          if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
        } catch (err) {
          options.onError(err);
        }
      });
    };
    const receiveTimer = setTimeout(() => {
      try {
        if (ended) return;
        refuse(
          grpcStatus(
            grpc.status.DEADLINE_EXCEEDED,
            `the request was not received within ${options.receiveTimeoutMs} ms of the call's start`,
          ),
          true,
        );
      } catch (err) {
        options.onError(err);
      }
    }, options.receiveTimeoutMs);
    receiveTimer.unref();

    return new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, proceed) => {
            const header = metadata.get('authorization')[0];
            options.authorize(typeof header === 'string' ? header : undefined).then(
              (key) => {
                if (ended) return;
                if (!acquire(key)) {
                  refuse(
                    grpcStatus(
                      grpc.status.RESOURCE_EXHAUSTED,
                      `the caller has ${options.callsPerCaller} calls in flight already; retry when one has ended`,
                      CALLS_RETRY_AFTER_S,
                    ),
                  );
                  return;
                }
                slot = key;
                proceed(metadata);
              },
              (err: unknown) => {
                if (!ended) refuse(statusOfError(err));
              },
            );
          },
          onReceiveHalfClose: (next) => {
            // The whole request is in: what follows is the route's, under its own deadline.
            clearTimeout(receiveTimer);
            next();
          },
          onCancel: () => {
            end();
          },
        });
      },
      sendStatus: (status, next) => {
        end();
        next(status);
      },
    });
  };
}
