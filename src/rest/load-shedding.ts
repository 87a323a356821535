/**
 * Load shedding (DESIGN §7): while the event loop's delay, sampled every second, is over
 * MAX_EVENT_LOOP_DELAY_MS, new requests are answered 503 `service_overloaded` with Retry-After
 * before any work. The sampler runs on a timer, where nothing catches for it: it catches its own
 * errors, keeps the last good value and says so once per run of failures, so that no condition of
 * the process (a descriptor shortage under a connection flood made `process.memoryUsage()`
 * throw in the plugin this replaces) can end the process from a timer.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { ApiError, toProblem } from '../errors.ts';

/** Resolution of the delay histogram; a sample's mean includes it, so it is taken off. */
const RESOLUTION_MS = 10;
const SAMPLE_EVERY_MS = 1000;
const RETRY_AFTER_S = 5;

/** A measure read on a timer: what it last read, whatever the reads since did. */
export interface Sampler {
  value(): number;
  stop(): void;
}

/**
 * Calls `read` every `everyMs` and keeps its value. A throwing read keeps the previous value and
 * is reported to `onError` once until a read succeeds again.
 */
export function startSampler(read: () => number, everyMs: number, onError: (err: unknown) => void): Sampler {
  let value = 0;
  let failing = false;
  const timer = setInterval(() => {
    try {
      value = read();
      failing = false;
    } catch (err) {
      if (!failing) {
        failing = true;
        try {
          onError(err);
        } catch {
          // A failing report must not end the process either.
        }
      }
    }
  }, everyMs);
  timer.unref();
  return { value: () => value, stop: () => clearInterval(timer) };
}

/** The mean event-loop delay since the previous read, in ms (infinite when the loop never turned). */
function eventLoopDelayReader(): { read: () => number; stop: () => void } {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  return {
    read: () => {
      const mean = histogram.mean / 1e6;
      histogram.reset();
      return Number.isNaN(mean) ? Infinity : Math.max(0, mean - RESOLUTION_MS);
    },
    stop: () => histogram.disable(),
  };
}

export interface LoadSheddingOptions {
  /** Delay (ms) over which requests are shed; 0 turns shedding (and its sampler) off. */
  maxEventLoopDelayMs: number;
  /** Tests replace the reading and its period; the event loop's delay every second otherwise. */
  read?: () => number;
  sampleEveryMs?: number;
}

export function installLoadShedding(app: FastifyInstance, options: LoadSheddingOptions): void {
  if (options.maxEventLoopDelayMs <= 0) return;
  const own = options.read === undefined ? eventLoopDelayReader() : null;
  const read = options.read ?? (own as { read: () => number }).read;
  const sampler = startSampler(read, options.sampleEveryMs ?? SAMPLE_EVERY_MS, (err) => {
    app.log.error({ err }, 'the load-shedding sampler failed; the last delay read stays in force');
  });
  app.addHook('onClose', async () => {
    sampler.stop();
    own?.stop();
  });
  app.addHook('onRequest', async (request, reply) => {
    const delay = sampler.value();
    if (delay <= options.maxEventLoopDelayMs) return;
    const err = new ApiError(
      'service_overloaded',
      `the service is overloaded (eventLoopDelay ${String(delay)}); retry later`,
      { retryAfter: RETRY_AFTER_S },
    );
    // Serialized here: a route's own answer schema (another problem shape) must not reshape it.
    return reply
      .code(503)
      .header('retry-after', String(RETRY_AFTER_S))
      .type('application/problem+json')
      .send(JSON.stringify(toProblem(err, request.id)));
  });
}
