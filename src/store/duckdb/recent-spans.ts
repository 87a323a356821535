/**
 * What the DuckDB writer remembers of the spans it committed, so that a span delivered again is
 * recognized without reading the table: a 64-bit fingerprint of each span's identity (organization,
 * trace id, span id, start second), kept per UTC day of the span's start for the days of the
 * window, at most `maxKeys` in all (12 to 23 bytes each: 8-byte slots, a table doubling at 70 % full).
 *
 * A fingerprint is a seeded hash, not the identity: a match only says "maybe stored", and the writer
 * confirms it against the table (exact, and as rare as a resend or a 2^-64 coincidence). Spans
 * outside what this remembers (older than the window, committed before this process opened, or in
 * days dropped to stay under `maxKeys`) are looked up in the table too: exact, only slower.
 */
import { randomInt } from 'node:crypto';

const DAY_S = 86400;
/** Fill at which a day's table doubles: probes stay short. */
const MAX_LOAD = 0.7;
const INITIAL_SLOTS = 1024;

/** Seeds chosen per process: without them a sender cannot aim its spans at one slot of the table. */
const SEED_A = randomInt(2 ** 32 - 1) | 0;
const SEED_B = randomInt(2 ** 32 - 1) | 0;

const M1 = 0x5bd1e995;
const M2 = 0x27d4eb2d;

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Writes the two 32-bit halves of a span's fingerprint at `out[at]`, `out[at + 1]`: two seeded
 * lanes over the identity's fields, each field ended by its length (so that ("ab", "c") and ("a",
 * "bc") differ); never both zero (zero marks an empty slot).
 */
export function fingerprintInto(
  out: Uint32Array,
  at: number,
  orgId: string,
  traceId: string,
  spanId: string,
  startS: number,
): void {
  let a = SEED_A;
  let b = SEED_B;
  for (const field of [orgId, traceId, spanId]) {
    for (let i = 0; i < field.length; i++) {
      const c = field.charCodeAt(i);
      a = Math.imul(a ^ c, M1);
      a ^= a >>> 15;
      b = Math.imul(b ^ c, M2);
      b ^= b >>> 13;
    }
    a = Math.imul(a ^ field.length, M2);
    b = Math.imul(b ^ field.length, M1);
  }
  // The start second as two 32-bit words (start times are safe integers).
  const low = startS | 0;
  const high = Math.floor(startS / 2 ** 32) | 0;
  a = Math.imul(Math.imul(a ^ low, M1) ^ high, M2);
  b = Math.imul(Math.imul(b ^ high, M2) ^ low, M1);
  const hi = finish(a);
  const lo = finish(b);
  out[at] = hi;
  out[at + 1] = hi === 0 && lo === 0 ? 1 : lo;
}

/** The fingerprint of one span as [hi, lo] (tests; the writer fills arrays with fingerprintInto). */
export function fingerprint(orgId: string, traceId: string, spanId: string, startS: number): [number, number] {
  const out = new Uint32Array(2);
  fingerprintInto(out, 0, orgId, traceId, spanId, startS);
  return [out[0] as number, out[1] as number];
}

/** One day's fingerprints: open addressing with linear probing over pairs of 32-bit words. */
class DayTable {
  private slots: Uint32Array;
  size = 0;

  constructor(capacity = INITIAL_SLOTS) {
    this.slots = new Uint32Array(capacity * 2);
  }

  private find(hi: number, lo: number): number {
    const mask = this.slots.length / 2 - 1;
    let i = (hi ^ Math.imul(lo, 0x9e3779b1)) & mask;
    for (;;) {
      const h = this.slots[i * 2] as number;
      const l = this.slots[i * 2 + 1] as number;
      if ((h === hi && l === lo) || (h === 0 && l === 0)) return i;
      i = (i + 1) & mask;
    }
  }

  has(hi: number, lo: number): boolean {
    const i = this.find(hi, lo);
    return this.slots[i * 2] === hi && this.slots[i * 2 + 1] === lo;
  }

  add(hi: number, lo: number): void {
    if ((this.size + 1) / (this.slots.length / 2) > MAX_LOAD) this.grow();
    const i = this.find(hi, lo);
    if (this.slots[i * 2] === hi && this.slots[i * 2 + 1] === lo) return;
    this.slots[i * 2] = hi;
    this.slots[i * 2 + 1] = lo;
    this.size++;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    for (let i = 0; i < old.length; i += 2) {
      const hi = old[i] as number;
      const lo = old[i + 1] as number;
      if (hi !== 0 || lo !== 0) {
        const j = this.find(hi, lo);
        this.slots[j * 2] = hi;
        this.slots[j * 2 + 1] = lo;
      }
    }
  }

  get bytes(): number {
    return this.slots.byteLength;
  }
}

export class RecentSpans {
  private readonly windowDays: number;
  private readonly maxKeys: number;
  private readonly days = new Map<number, DayTable>();
  /** Days before this one are not (or no longer) remembered. */
  private firstDay: number;
  /** The latest start of the spans stored before this process opened the file (not remembered). */
  private readonly storedBefore: number;
  private keys = 0;

  /**
   * `nowS`: when the writer opens; `storedUpToS`: the latest start among the spans already in the
   * file (null when it has none). Nothing is loaded: what was stored before is looked up instead.
   */
  constructor(options: { windowDays: number; maxKeys: number; nowS: number; storedUpToS: number | null }) {
    this.windowDays = options.windowDays;
    this.maxKeys = options.maxKeys;
    this.firstDay = Math.floor(options.nowS / DAY_S) - options.windowDays + 1;
    this.storedBefore = options.storedUpToS ?? -Infinity;
  }

  /**
   * Whether every stored span starting at `startS` is remembered, so that "not held" means "not
   * stored"; otherwise the table must be asked.
   */
  covers(startS: number): boolean {
    return startS > this.storedBefore && Math.floor(startS / DAY_S) >= this.firstDay;
  }

  /** Whether a span with this fingerprint, starting at `startS` (a covered day), may be stored. */
  mayHold(startS: number, hi: number, lo: number): boolean {
    return this.days.get(Math.floor(startS / DAY_S))?.has(hi, lo) === true;
  }

  /** Remembers a committed span (nothing when its day is not covered). */
  add(startS: number, hi: number, lo: number): void {
    const day = Math.floor(startS / DAY_S);
    if (day < this.firstDay) return;
    let table = this.days.get(day);
    if (table === undefined) {
      table = new DayTable();
      this.days.set(day, table);
    }
    const before = table.size;
    table.add(hi, lo);
    this.keys += table.size - before;
    if (this.keys > this.maxKeys) this.dropOldest();
  }

  /** Forgets the days that left the window (the writer calls it as time passes). */
  expire(nowS: number): void {
    const first = Math.floor(nowS / DAY_S) - this.windowDays + 1;
    while (this.firstDay < first) this.forget(this.firstDay++);
  }

  /** Over `maxKeys`: the oldest remembered day goes (its spans are then looked up in the table). */
  private dropOldest(): void {
    while (this.keys > this.maxKeys && this.days.size > 0) {
      const oldest = Math.min(...this.days.keys());
      for (; this.firstDay <= oldest; this.firstDay++) this.forget(this.firstDay);
    }
  }

  private forget(day: number): void {
    const table = this.days.get(day);
    if (table === undefined) return;
    this.keys -= table.size;
    this.days.delete(day);
  }

  /** Fingerprints held, and the bytes their tables take. */
  get stats(): { keys: number; bytes: number; firstDay: number } {
    let bytes = 0;
    for (const t of this.days.values()) bytes += t.bytes;
    return { keys: this.keys, bytes, firstDay: this.firstDay };
  }
}
