/**
 * Name resolution for webhook targets, bounded in time and in lookups at once. The system's
 * resolver (dns.lookup: getaddrinfo, as the rest of the process resolves) runs on libuv's thread
 * pool, shared with file, crypto and zlib work, and cannot be cancelled: a lookup past its timeout
 * is answered as timed out at once, but it keeps its slot until getaddrinfo returns, so slow DNS
 * (a subscriber's own name server, say) holds at most `maxInFlight` threads of the pool.
 */
import dns from 'node:dns/promises';

/** Every address of a host name. */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: Resolve = (host) => dns.lookup(host, { all: true, order: 'verbatim' });

/** Lookups of webhook targets running at once in a process: half of libuv's 4 threads, the rest left to files, crypto and zlib. */
const MAX_LOOKUPS_IN_FLIGHT = 2;

/** The lookup did not answer within its timeout (waiting for a slot included). */
export class LookupTimedOut extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** At most `maxInFlight` lookups at once; the others wait for a slot, within their own timeout. */
export class LookupGate {
  private readonly maxInFlight: number;
  private running = 0;
  private readonly waiting = new Set<() => void>();

  constructor(maxInFlight: number) {
    this.maxInFlight = maxInFlight;
  }

  /** Lookups holding a slot: those running, answered as timed out or not. */
  get inFlight(): number {
    return this.running;
  }

  /**
   * `lookup` run once a slot is free, its answer (or its error) if it comes within `timeoutMs` of
   * this call; LookupTimedOut otherwise. The slot is freed when the lookup settles, not at the timeout.
   */
  run<T>(lookup: () => Promise<T>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      const start = () => {
        this.running++;
        const answer = (async () => lookup())();
        answer.then(
          (value) => settle(() => resolve(value)),
          (err: unknown) => settle(() => reject(err instanceof Error ? err : new Error(String(err)))),
        );
        void answer
          .catch(() => undefined)
          .finally(() => {
            this.running--;
            this.next();
          });
      };
      const timer = setTimeout(() => {
        this.waiting.delete(start);
        settle(() => reject(new LookupTimedOut(timeoutMs)));
      }, timeoutMs);
      if (this.running < this.maxInFlight) start();
      else this.waiting.add(start);
    });
  }

  private next(): void {
    const [first] = this.waiting;
    if (first === undefined || this.running >= this.maxInFlight) return;
    this.waiting.delete(first);
    first();
  }
}

/** The lookups of this process's webhook targets, at creation and at every attempt. */
export const systemGate = new LookupGate(MAX_LOOKUPS_IN_FLIGHT);
