/**
 * Worker threads that decode OTLP bodies (otlp/decode-worker.ts), so that parsing up to
 * OTLP_MAX_DECOMPRESSED_BYTES never holds the service's event loop (DESIGN §12). Each thread's heap
 * is capped: a body that needs more memory to decode fails alone, as a bad payload, and the thread
 * is replaced. The queue is bounded; beyond it senders are told to retry.
 */
import os from 'node:os';
import { Piscina } from 'piscina';
import { ApiError } from '../errors.ts';
import type { Decoded, DecodeResult, DecodeTask } from './decode-worker.ts';
import { OtlpDecodeError } from './types.ts';
import type { SpanBounds } from './traces/mapping.ts';

/** Heap of one decoding thread: several times what the largest allowed body needs. */
const HEAP_MB = 512;
/**
 * Young generation of a decoding thread: V8's default lets each thread keep ~200 MB of short-lived
 * decoding garbage resident under a stream of large bodies; 8 MiB keeps it small for a few more
 * scavenges (measured in bench:abuse and bench:ingest).
 */
const YOUNG_MB = 8;
/** Bodies smaller than this are copied to the thread (Buffer's pool serves up to 4 KiB). */
const TRANSFER_MIN_BYTES = 64 * 1024;
/** Bodies waiting for a thread, per thread. */
const QUEUE_PER_THREAD = 16;

export interface DecodePool {
  /**
   * The body's mapped spans (of a trace request, or of a logs request's harness events, with the
   * number of records that map to none) or harness metric points (of a metrics request, with the
   * number of other data points); throws OtlpDecodeError for a malformed or over-bound body.
   */
  decode(
    body: Buffer,
    format: { protobuf: boolean; signal: DecodeTask['signal'] },
    abort: AbortSignal,
  ): Promise<Decoded>;
  close(): Promise<void>;
}

export function createDecodePool(limits: { maxSpans: number; bounds: SpanBounds }): DecodePool {
  const threads = Math.max(1, Math.min(2, os.availableParallelism() - 1));
  const pool = new Piscina<DecodeTask, DecodeResult>({
    filename: new URL('./decode-worker.ts', import.meta.url).href,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: 30_000,
    maxQueue: threads * QUEUE_PER_THREAD,
    resourceLimits: { maxOldGenerationSizeMb: HEAP_MB, maxYoungGenerationSizeMb: YOUNG_MB },
  });
  // A thread that fails outside any task (one hit its heap limit after a deadline abort had taken
  // its task away) is replaced by Piscina; unheard, the 'error' event would end the process.
  pool.on('error', () => undefined);
  return {
    async decode(body, format, signal) {
      // A large body moves to the thread without a copy when it owns its memory; small ones share
      // Node's buffer pool (which must not move) and are copied.
      const own =
        body.byteLength >= TRANSFER_MIN_BYTES && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength
          ? body
          : new Uint8Array(body);
      const task: DecodeTask = { body: own, ...format, maxSpans: limits.maxSpans, bounds: limits.bounds };
      let result: DecodeResult;
      try {
        result = await pool.run(task, { transferList: [own.buffer as ArrayBuffer], signal });
      } catch (err) {
        throw poolError(err, signal);
      }
      if ('error' in result) throw new OtlpDecodeError(result.error);
      return result;
    },
    close: () => pool.destroy(),
  };
}

function poolError(err: unknown, signal: AbortSignal): Error {
  if (signal.aborted) return new ApiError('request_timeout', 'decoding the telemetry ran past the request deadline');
  const code = (err as { code?: string }).code;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY')
    return new OtlpDecodeError(`the body needs more than ${HEAP_MB} MiB to decode`);
  if (err instanceof Error && /queue is at limit/i.test(err.message)) {
    return new ApiError('service_overloaded', 'too much telemetry is waiting to be decoded; retry later', {
      retryAfter: 1,
    });
  }
  return err instanceof Error ? err : new Error(String(err));
}
