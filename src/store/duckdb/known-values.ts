/**
 * Which dimension values the trace engine may hold, readable on the service's thread without a
 * round trip to the engine's: a Bloom filter in shared memory over every value of the dictionary
 * (dim_values, dictionary.ts). The engine's thread adds each value before the spans that first name
 * it commit, and every stored value when it opens, so a value the filter does not hold is named by
 * no stored span: a query about it alone has an empty answer. A value it holds may still be named
 * by none (about 2 % of answers at a million values; beyond, the filter fills and says so of
 * nearly every value): the query then runs, as without it. Its size never grows (DESIGN §12).
 * A value is hashed as stored, lone surrogates as U+FFFD (shared/well-formed.ts): whichever form
 * added it, any form of it asks.
 */
import { wellFormed } from '../../shared/well-formed.ts';

/** 2^23 bits (1 MiB): a few false answers in ten thousand at 300,000 values, about 2 % at a million. */
const KNOWN_VALUES_BYTES = 1 << 20;
const HASHES = 4;

export class KnownValues {
  private readonly words: Int32Array;
  private readonly mask: number;

  private constructor(buffer: SharedArrayBuffer) {
    const bits = buffer.byteLength * 8;
    if (buffer.byteLength < 4 || (bits & (bits - 1)) !== 0)
      throw new RangeError('a known-values buffer holds a power of two of bytes, at least 4');
    this.words = new Int32Array(buffer);
    this.mask = bits - 1;
  }

  /** A filter that holds no value yet, in memory another thread can share (`buffer`). */
  static create(bytes = KNOWN_VALUES_BYTES): KnownValues {
    return new KnownValues(new SharedArrayBuffer(bytes));
  }

  /** The filter over a buffer another thread created. */
  static over(buffer: SharedArrayBuffer): KnownValues {
    return new KnownValues(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.words.buffer as SharedArrayBuffer;
  }

  add(value: string): void {
    const [first, step] = hashes(wellFormed(value));
    for (let i = 0, h = first; i < HASHES; i++, h = (h + step) | 0) {
      const bit = h & this.mask;
      Atomics.or(this.words, bit >>> 5, 1 << (bit & 31));
    }
  }

  /** False only for a value never added. */
  mayHold(value: string): boolean {
    const [first, step] = hashes(wellFormed(value));
    for (let i = 0, h = first; i < HASHES; i++, h = (h + step) | 0) {
      const bit = h & this.mask;
      if ((Atomics.load(this.words, bit >>> 5) & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit hashes of the value's UTF-16 code units (FNV-1a, and a multiplicative one); the second odd. */
function hashes(value: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  return [a, b | 1];
}
