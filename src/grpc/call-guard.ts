/**
 * What every gRPC call passes before grpc-js reads its message (the interceptor runs when the
 * call's metadata arrives; grpc-js reads the stream only once it lets the metadata through):
 *
 * - the caller is authenticated and may ingest (the HTTP receiver's rule, `assertCanIngest`: it may
 *   create content in some workspace), or the call ends UNAUTHENTICATED / PERMISSION_DENIED
 *   having read nothing;
 * - the caller has fewer than `callsPerCaller` calls receiving their message on this process (each
 *   can hold a whole message in memory), or the call waits for one of them to finish receiving,
 *   its own message unread (grpc-js reads a stream only once its metadata is let through, so
 *   HTTP/2 flow control holds the sender to one window meanwhile); a caller with
 *   MAX_WAITING_PER_CALLER calls waiting already is refused RESOURCE_EXHAUSTED with a RetryInfo.
 *   A call that has received its message gives its place up: calls being answered are bounded
 *   by the route (its decode queue and deadline), not here, so an exporter's concurrent calls
 *   (the Collector sends ten at once by default) go through while slow senders hold only theirs;
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

/** How soon a caller refused for too many waiting calls may try again: waits end within the receive deadline. */
const CALLS_RETRY_AFTER_S = 1;
/** Calls of one caller that may wait for a place to receive (each holds a stream, not a message). */
export const MAX_WAITING_PER_CALLER = 64;
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

/** Places to receive a message, per caller, and the calls waiting for one (first come, first served). */
class ReceivePlaces {
  private readonly receiving = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  /**
   * Takes a place for `key` now (true), or queues `admit` to be called when one frees (false), or
   * refuses (null) when the caller has MAX_WAITING_PER_CALLER calls waiting already.
   */
  take(key: string, admit: () => void): boolean | null {
    const n = this.receiving.get(key) ?? 0;
    if (n < this.max) {
      this.receiving.set(key, n + 1);
      return true;
    }
    const queue = this.waiting.get(key) ?? [];
    if (queue.length >= MAX_WAITING_PER_CALLER) return null;
    queue.push(admit);
    this.waiting.set(key, queue);
    return false;
  }

  /** A waiting call that ends before its turn leaves the queue. */
  leave(key: string, admit: () => void): void {
    const queue = this.waiting.get(key);
    if (queue === undefined) return;
    const at = queue.indexOf(admit);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.waiting.delete(key);
  }

  /** Gives a place back: the first waiting call of the caller takes it. */
  give(key: string): void {
    const next = this.waiting.get(key)?.shift();
    if (this.waiting.get(key)?.length === 0) this.waiting.delete(key);
    if (next !== undefined) {
      next();
      return;
    }
    const n = (this.receiving.get(key) ?? 1) - 1;
    if (n <= 0) this.receiving.delete(key);
    else this.receiving.set(key, n);
  }
}

export function callGuard(options: CallGuardOptions): grpc.ServerInterceptor {
  const places = new ReceivePlaces(options.callsPerCaller);

  return (_method, call) => {
    const peer = call.getConnectionInfo();
    const stream = streamOf(call);
    options.connections.callStarted(peer);
    let ended = false;
    /** The caller whose place this call holds while it receives, or waits for. */
    let place: string | null = null;
    let waitingFor: { key: string; admit: () => void } | null = null;
    const giveUpPlace = () => {
      if (waitingFor !== null) places.leave(waitingFor.key, waitingFor.admit);
      waitingFor = null;
      if (place !== null) places.give(place);
      place = null;
    };
    const end = () => {
      if (ended) return;
      ended = true;
      clearTimeout(receiveTimer);
      giveUpPlace();
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
                const admit = () => {
                  waitingFor = null;
                  place = key;
                  if (ended) giveUpPlace();
                  else proceed(metadata);
                };
                const taken = places.take(key, admit);
                if (taken === true) admit();
                else if (taken === false) waitingFor = { key, admit };
                else
                  refuse(
                    grpcStatus(
                      grpc.status.RESOURCE_EXHAUSTED,
                      `the caller has ${MAX_WAITING_PER_CALLER} calls waiting to be received already; retry when they have been`,
                      CALLS_RETRY_AFTER_S,
                    ),
                  );
              },
              (err: unknown) => {
                if (!ended) refuse(statusOfError(err));
              },
            );
          },
          onReceiveHalfClose: (next) => {
            // The whole request is in: what follows is the route's, under its own deadline, and
            // the place goes to the caller's next call.
            clearTimeout(receiveTimer);
            giveUpPlace();
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
