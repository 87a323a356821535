/**
 * Name resolution for webhook targets, bounded in time, in lookups at once, and per organization.
 * The system's resolver (dns.lookup: getaddrinfo, as the rest of the process resolves, /etc/hosts
 * and the search domains included) runs on libuv's thread pool, shared with file, crypto and zlib
 * work, and cannot be cancelled: a lookup past its timeout is answered as timed out at once, but it
 * keeps its slot until getaddrinfo returns, so slow DNS holds at most `maxInFlight` threads of the
 * pool. Each organization (the gate's key) holds at most `maxPerKey` slots, so a subscriber whose
 * name server never answers stalls its own organization's lookups, not everyone's.
 *
 * Why not c-ares (dns.Resolver: its own sockets, timeouts and cancel, no thread held): its
 * resolve4/resolve6 read neither /etc/hosts nor the search domains, so a target allowed by
 * WEBHOOK_ALLOWED_TARGETS under a name only the system resolver knows would stop resolving, and
 * deliveries would check another answer than the one the rest of the process sees.
 */
import dns from 'node:dns/promises';

/** Every address of a host name. */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: Resolve = (host) => dns.lookup(host, { all: true, order: 'verbatim' });

/** Lookups of webhook targets running at once in a process: half of libuv's 4 threads, the rest left to files, crypto and zlib. */
const MAX_LOOKUPS_IN_FLIGHT = 2;
/** Of those, one organization's: a subscriber's silent name server holds one thread, its organization's turn. */
const MAX_LOOKUPS_PER_ORG = 1;

/** The lookup ran and did not answer within its timeout: the name server's doing. */
export class LookupTimedOut extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** The lookup never started: no slot came free for it (the process's doing, not the name's). */
export class LookupBusy extends Error {}

/** A slot taken: whose, and whether its lookup is past its timeout (it frees when getaddrinfo returns). */
interface Slot {
  key: string;
  late: boolean;
}

/** How long a lookup may wait for its slot, then run; who hears that it started. */
export interface LookupBounds {
  timeoutMs: number;
  waitMs?: number | undefined;
  started?: (() => void) | undefined;
}

interface Waiter {
  key: string;
  start: () => void;
}

/**
 * At most `maxInFlight` lookups at once, at most `maxPerKey` of them one key's. A lookup that
 * cannot start waits for a slot, within its wait bound, unless everything it waits behind is late
 * already (past its own timeout: it may never return); then it fails with LookupBusy. Once
 * started, it has its whole timeout to answer.
 */
export class LookupGate {
  private readonly maxInFlight: number;
  private readonly maxPerKey: number;
  private readonly slots = new Set<Slot>();
  private readonly waiting = new Set<Waiter>();

  constructor(maxInFlight: number, maxPerKey = maxInFlight) {
    this.maxInFlight = maxInFlight;
    this.maxPerKey = maxPerKey;
  }

  /** Lookups holding a slot: those running, answered as timed out or not. */
  get inFlight(): number {
    return this.slots.size;
  }

  /** The slots `key` holds. */
  private held(key: string): Slot[] {
    return [...this.slots].filter((s) => s.key === key);
  }

  /** What keeps a lookup of `key` from starting now: its key's slots, or every slot; none when it may start. */
  private blockers(key: string): Slot[] {
    const own = this.held(key);
    if (own.length >= this.maxPerKey) return own;
    return this.slots.size >= this.maxInFlight ? [...this.slots] : [];
  }

  /**
   * `lookup` run for `key` once a slot is free (`started` hears when), its answer (or its error)
   * if it comes within `timeoutMs` of its start, LookupTimedOut otherwise; LookupBusy when no slot
   * came within `waitMs` (`timeoutMs` unless said) of this call. The slot is freed when the lookup
   * settles, not at the timeout.
   */
  run<T>(key: string, lookup: () => Promise<T>, bounds: LookupBounds): Promise<T> {
    const { timeoutMs, waitMs = timeoutMs, started } = bounds;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      const start = () => {
        clearTimeout(timer);
        const slot: Slot = { key, late: false };
        this.slots.add(slot);
        timer = setTimeout(() => {
          slot.late = true;
          settle(() => reject(new LookupTimedOut(timeoutMs)));
        }, timeoutMs);
        started?.();
        const answer = (async () => lookup())();
        answer.then(
          (value) => settle(() => resolve(value)),
          (err: unknown) => settle(() => reject(err instanceof Error ? err : new Error(String(err)))),
        );
        void answer
          .catch(() => undefined)
          .finally(() => {
            this.slots.delete(slot);
            this.next();
          });
      };
      const blockers = this.blockers(key);
      if (blockers.length === 0) {
        start();
        return;
      }
      if (blockers.every((s) => s.late)) {
        reject(new LookupBusy('every slot it could take is held by a lookup past its timeout'));
        return;
      }
      const waiter: Waiter = { key, start };
      this.waiting.add(waiter);
      timer = setTimeout(() => {
        this.waiting.delete(waiter);
        settle(() => reject(new LookupBusy(`no slot came free within ${waitMs} ms`)));
      }, waitMs);
    });
  }

  /** Starts the oldest waiters that may start now. */
  private next(): void {
    for (const waiter of this.waiting) {
      if (this.slots.size >= this.maxInFlight) return;
      if (this.held(waiter.key).length >= this.maxPerKey) continue;
      this.waiting.delete(waiter);
      waiter.start();
    }
  }
}

/** The lookups of this process's webhook targets, at creation and at every attempt, keyed by organization. */
export const systemGate = new LookupGate(MAX_LOOKUPS_IN_FLIGHT, MAX_LOOKUPS_PER_ORG);
