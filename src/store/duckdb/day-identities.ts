/**
 * What the DuckDB writer knows of the identities stored in one table (spans, or metric points), so
 * that a row delivered again is recognized without reading the table on every write: a 96-bit
 * seeded fingerprint of each stored row's identity, per UTC day of its time. A day is loaded from
 * the table the first time a row of it is checked (one read of that day's rows, the zone maps on
 * the time column skipping the others) and kept whole from then on by the writer's commits; at
 * most `maxKeys` fingerprints are kept in all, the days checked longest ago dropped first (and
 * loaded again when needed). A day larger than `maxKeys` alone is not held: its rows are looked
 * up in the table instead (identities.ts). So the work of a write is bounded by the rows it
 * brings, not by the table, however its times are scattered: each day costs one load per process
 * while memory holds it.
 *
 * A fingerprint stands for the identity: two different identities share one with odds of about
 * n / 2^96 for a row checked against n held ones (below 10^-21 for the default bound), and the
 * seeds are the process's own, so a sender cannot aim at another's rows.
 */
import { randomInt } from 'node:crypto';

export const DAY_S = 86_400;
/** Words of a fingerprint (32-bit each). */
export const PRINT_WORDS = 3;
/** Fill at which a day's table doubles: probes stay short. */
const MAX_LOAD = 0.7;
const INITIAL_SLOTS = 256;

const SEEDS = [randomInt(2 ** 32 - 1) | 0, randomInt(2 ** 32 - 1) | 0, randomInt(2 ** 32 - 1) | 0] as const;
const M = [0x5bd1e995, 0x27d4eb2d, 0x165667b1] as const;

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Writes the fingerprint of an identity (its text fields, then a time in seconds) at
 * `out[at..at+2]`: three seeded lanes over the fields, each field ended by its length (so that
 * ("ab", "c") and ("a", "bc") differ); never all zero (zero marks an empty slot).
 */
export function fingerprintInto(out: Uint32Array, at: number, fields: readonly string[], timeS: number): void {
  let a = SEEDS[0];
  let b = SEEDS[1];
  let c = SEEDS[2];
  for (const field of fields) {
    for (let i = 0; i < field.length; i++) {
      const ch = field.charCodeAt(i);
      a = Math.imul(a ^ ch, M[0]);
      a ^= a >>> 15;
      b = Math.imul(b ^ ch, M[1]);
      b ^= b >>> 13;
      c = Math.imul(c ^ ch, M[2]);
      c ^= c >>> 14;
    }
    a = Math.imul(a ^ field.length, M[1]);
    b = Math.imul(b ^ field.length, M[2]);
    c = Math.imul(c ^ field.length, M[0]);
  }
  const low = timeS | 0;
  const high = Math.floor(timeS / 2 ** 32) | 0;
  a = Math.imul(Math.imul(a ^ low, M[0]) ^ high, M[1]);
  b = Math.imul(Math.imul(b ^ high, M[1]) ^ low, M[2]);
  c = Math.imul(Math.imul(c ^ low, M[2]) ^ high, M[0]);
  out[at] = finish(a);
  out[at + 1] = finish(b);
  const last = finish(c);
  out[at + 2] = out[at] === 0 && out[at + 1] === 0 && last === 0 ? 1 : last;
}

/** One day's fingerprints: open addressing with linear probing over triples of 32-bit words. */
class DayTable {
  private slots: Uint32Array;
  size = 0;

  constructor(capacity = INITIAL_SLOTS) {
    this.slots = new Uint32Array(capacity * PRINT_WORDS);
  }

  /** The slot holding the fingerprint at `prints[at]`, or the empty slot where it would go. */
  private find(prints: Uint32Array, at: number): number {
    const w = PRINT_WORDS;
    const mask = this.slots.length / w - 1;
    const p0 = prints[at] as number;
    const p1 = prints[at + 1] as number;
    const p2 = prints[at + 2] as number;
    for (let i = (p0 ^ Math.imul(p1, 0x9e3779b1)) & mask; ; i = (i + 1) & mask) {
      const s0 = this.slots[i * w] as number;
      const s1 = this.slots[i * w + 1] as number;
      const s2 = this.slots[i * w + 2] as number;
      if ((s0 === p0 && s1 === p1 && s2 === p2) || (s0 === 0 && s1 === 0 && s2 === 0)) return i;
    }
  }

  has(prints: Uint32Array, at: number): boolean {
    const i = this.find(prints, at) * PRINT_WORDS;
    return this.slots[i] === prints[at] && this.slots[i + 1] === prints[at + 1] && this.slots[i + 2] === prints[at + 2];
  }

  add(prints: Uint32Array, at: number): void {
    if ((this.size + 1) / (this.slots.length / PRINT_WORDS) > MAX_LOAD) this.grow();
    const i = this.find(prints, at) * PRINT_WORDS;
    if (this.slots[i] !== 0 || this.slots[i + 1] !== 0 || this.slots[i + 2] !== 0) return;
    this.slots.set(prints.subarray(at, at + PRINT_WORDS), i);
    this.size++;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    for (let i = 0; i < old.length; i += PRINT_WORDS) {
      if (old[i] === 0 && old[i + 1] === 0 && old[i + 2] === 0) continue;
      this.slots.set(old.subarray(i, i + PRINT_WORDS), this.find(old, i) * PRINT_WORDS);
    }
  }

  get bytes(): number {
    return this.slots.byteLength;
  }
}

/** Reads a day's stored identities: calls `each` with their fingerprints, `count` of them from `prints[0]`. */
export type DayLoader = (day: number, each: (prints: Uint32Array, count: number) => void) => Promise<void>;

export class DayIdentities {
  private readonly maxKeys: number;
  private readonly load: DayLoader;
  /** Held days, in the order they were last checked (Map order: oldest first). */
  private readonly days = new Map<number, DayTable>();
  /** Days found larger than maxKeys: looked up in the table (kept to avoid loading them again). */
  private readonly oversized = new Set<number>();
  private keys = 0;
  /** Days read from the table so far (each costs one read of its rows). */
  loads = 0;

  constructor(options: { maxKeys: number; load: DayLoader }) {
    this.maxKeys = options.maxKeys;
    this.load = options.load;
  }

  /**
   * Makes every day of `days` held (loading those that are not), unless too large; answers the
   * days that are not held. The caller holds the writer: no row of these days is committed meanwhile.
   */
  async hold(days: Iterable<number>): Promise<Set<number>> {
    const unheld = new Set<number>();
    const wanted = [...new Set(days)].sort((a, b) => a - b);
    for (const day of wanted) {
      const table = this.days.get(day);
      if (table !== undefined) {
        // Checked now: the most recently used goes last.
        this.days.delete(day);
        this.days.set(day, table);
      }
    }
    for (const day of wanted) {
      if (this.days.has(day)) continue;
      if (this.oversized.has(day) || !(await this.loadDay(day, new Set(wanted)))) unheld.add(day);
    }
    return unheld;
  }

  private async loadDay(day: number, keep: ReadonlySet<number>): Promise<boolean> {
    const table = new DayTable();
    this.loads++;
    // Past the bound the rest of the day is read but not kept: the day is then looked up instead.
    await this.load(day, (prints, count) => {
      for (let k = 0; k < count && table.size <= this.maxKeys; k++) table.add(prints, k * PRINT_WORDS);
    });
    if (table.size > this.maxKeys) {
      this.oversized.add(day);
      return false;
    }
    this.days.set(day, table);
    this.keys += table.size;
    this.shrink(keep);
    return this.days.has(day);
  }

  /** Drops the days checked longest ago, but not those of `keep`, until within maxKeys. */
  private shrink(keep: ReadonlySet<number> = new Set()): void {
    for (const [day, table] of this.days) {
      if (this.keys <= this.maxKeys) return;
      if (keep.has(day)) continue;
      this.keys -= table.size;
      this.days.delete(day);
    }
  }

  /** Whether `day` is held (every stored row of it known). */
  isHeld(day: number): boolean {
    return this.days.has(day);
  }

  /** Whether the row at `prints[at]`, of held day `day`, is stored. */
  holds(day: number, prints: Uint32Array, at: number): boolean {
    return this.days.get(day)?.has(prints, at) === true;
  }

  /** A committed row: added to its day when that day is held (an unheld day is loaded whole later). */
  add(day: number, prints: Uint32Array, at: number): void {
    const table = this.days.get(day);
    if (table === undefined) return;
    const before = table.size;
    table.add(prints, at);
    this.keys += table.size - before;
  }

  /** After commits: back within maxKeys (the days of the last group may have grown). */
  trim(): void {
    this.shrink();
  }

  /** Retention deleted every row before `cutoffS`: their days are forgotten. */
  forgetBefore(cutoffS: number): void {
    const first = Math.floor(cutoffS / DAY_S);
    for (const [day, table] of this.days) {
      if (day >= first) continue;
      this.keys -= table.size;
      this.days.delete(day);
    }
    // A day cut by the cutoff lost rows: loaded again when next needed.
    const cut = this.days.get(first);
    if (cut !== undefined && cutoffS % DAY_S !== 0) {
      this.keys -= cut.size;
      this.days.delete(first);
    }
    for (const day of this.oversized) if (day <= first) this.oversized.delete(day);
  }

  get stats(): { keys: number; bytes: number; days: number; loads: number } {
    let bytes = 0;
    for (const t of this.days.values()) bytes += t.bytes;
    return { keys: this.keys, bytes, days: this.days.size, loads: this.loads };
  }
}
