/**
 * Integer codes for the low-cardinality dimensions (harness, skill, command, mcp, tool, model,
 * provider, agent):
 * grouping and filtering on integers costs DuckDB ~15% less than on strings. Users and sessions,
 * whose counts have no bound, stay strings.
 *
 * The table `dim_values` (one row per value, codes from 1, never changed) is the truth; this class
 * keeps at most `capacity` of its rows in memory, least recently used evicted first (DESIGN §12: a
 * stream of distinct values is stored and counted, it does not grow the engine's memory). What the
 * cache misses is looked up in the table, once per append and once per query for all the values it
 * needs. New codes are assigned by the one writer inside its transaction and enter the cache only
 * once committed, so every cached code is stored and a code is never reused. Given KnownValues
 * (known-values.ts), it tells them of every value, so another thread can tell a value no span names.
 * A code is a stored text's: values differing only by lone surrogates, which DuckDB stores as
 * U+FFFD (shared/well-formed.ts), are one value with one code, whichever form names or asks it.
 */
import { INTEGER, LIST, VARCHAR, listValue, type DuckDBConnection } from '@duckdb/node-api';
import { wellFormed } from '../../shared/well-formed.ts';
import type { Dimension, SpanRow } from '../trace-port.ts';
import type { KnownValues } from './known-values.ts';

export const ENCODED = [
  'harness',
  'skill',
  'command',
  'mcp',
  'tool',
  'model',
  'provider',
  'agent',
] as const satisfies readonly (Dimension & keyof SpanRow)[];
export type EncodedDimension = (typeof ENCODED)[number];

/** Stored values read at a time when a dictionary loads into KnownValues. */
const KNOWN_PAGE = 100_000;

/** A code no value has: an unknown filter value matches no row. */
export const NO_CODE = 0;

export const isEncoded = (d: Dimension): d is EncodedDimension => (ENCODED as readonly Dimension[]).includes(d);

/** The codes of one append's values, some new: stored with its spans, cached once committed. */
export interface DictionaryBatch {
  /** By value as the spans name it. */
  readonly codes: ReadonlyMap<string, number>;
  /** Values first seen in this append, in their stored form, with their new codes (rows of dim_values to append). */
  readonly added: [number, string][];
}

/**
 * The engine thread's bounded view of dim_values: at most `capacity` values in memory (least
 * recently used evicted), every cached code committed; lookups and new codes as the module says.
 * Only the writer calls `encode`/`committed`/`rolledBack`, one append at a time.
 */
export class Dictionary {
  /** value -> code, least recently used first (a Map iterates in insertion order). */
  private readonly byValue = new Map<string, number>();
  private readonly byCode = new Map<number, string>();
  private readonly capacity: number;
  /** The code the next new value gets. */
  private nextCode: number;
  /** Told of every value: those stored when it loads, then each new one before its append commits. */
  private readonly known: KnownValues | undefined;

  private constructor(capacity: number, nextCode: number, known: KnownValues | undefined) {
    this.capacity = capacity;
    this.nextCode = nextCode;
    this.known = known;
  }

  /**
   * Reads the next code and caches the `capacity` values last added (likely the ones in use);
   * `known` is told of every stored value, read `page` codes at a time.
   */
  static async load(
    conn: DuckDBConnection,
    capacity: number,
    known?: KnownValues,
    page = KNOWN_PAGE,
  ): Promise<Dictionary> {
    const [max] = (await conn.runAndReadAll('SELECT COALESCE(max(id), 0) AS id FROM dim_values')).getRowObjectsJS();
    const dict = new Dictionary(capacity, Number(max?.id ?? 0) + 1, known);
    const rows = (
      await conn.runAndReadAll('SELECT id, value FROM dim_values ORDER BY id DESC LIMIT $1', [capacity])
    ).getRows();
    for (const [id, value] of rows.reverse()) dict.remember(String(value), Number(id));
    for (let from = 0; known !== undefined && from < dict.nextCode; from += page) {
      const values = await conn.runAndReadAll('SELECT value FROM dim_values WHERE id > $1 AND id <= $2', [
        from,
        from + page,
      ]);
      for (const [value] of values.getRows()) known.add(String(value));
    }
    return dict;
  }

  /** Values held in memory (never more than the capacity). */
  get size(): number {
    return this.byValue.size;
  }

  /** Caches value <-> code as the most recently used, evicting the least recently used beyond the capacity. */
  private remember(value: string, code: number): void {
    this.byValue.delete(value);
    this.byValue.set(value, code);
    this.byCode.set(code, value);
    while (this.byValue.size > this.capacity) {
      const [oldest, oldCode] = this.byValue.entries().next().value as [string, number];
      this.byValue.delete(oldest);
      this.byCode.delete(oldCode);
    }
  }

  /** The cached code of `value`, marked as used. */
  private cachedCode(value: string): number | undefined {
    const code = this.byValue.get(value);
    if (code !== undefined) this.remember(value, code);
    return code;
  }

  /**
   * Codes of `values` (by value as asked: the code of its stored form) from the cache, then from
   * dim_values on `conn` (one lookup); unknown values are absent.
   */
  async codesOf(conn: DuckDBConnection, values: Iterable<string>): Promise<Map<string, number>> {
    const codes = new Map<string, number>();
    const missing: string[] = [];
    for (const v of new Set(values)) {
      const code = this.cachedCode(wellFormed(v));
      if (code === undefined) missing.push(v);
      else codes.set(v, code);
    }
    if (missing.length > 0) {
      const stored = new Set(missing.map(wellFormed));
      const rows = (
        await conn.runAndReadAll(
          'SELECT id, value FROM dim_values WHERE value IN (SELECT unnest($1))',
          [listValue([...stored])],
          [LIST(VARCHAR)],
        )
      ).getRows();
      const found = new Map<string, number>();
      for (const [id, value] of rows) {
        found.set(String(value), Number(id));
        this.remember(String(value), Number(id));
      }
      for (const v of missing) {
        const code = found.get(wellFormed(v));
        if (code !== undefined) codes.set(v, code);
      }
    }
    return codes;
  }

  /** Values of stored `codes`, from the cache, then from dim_values on `conn` (one lookup). */
  async valuesOf(conn: DuckDBConnection, codes: Iterable<number>): Promise<Map<number, string>> {
    const values = new Map<number, string>();
    const missing: number[] = [];
    for (const c of new Set(codes)) {
      const value = this.byCode.get(c);
      if (value === undefined) missing.push(c);
      else {
        values.set(c, value);
        this.remember(value, c);
      }
    }
    if (missing.length > 0) {
      const rows = (
        await conn.runAndReadAll(
          'SELECT id, value FROM dim_values WHERE id IN (SELECT unnest($1))',
          [listValue(missing)],
          [LIST(INTEGER)],
        )
      ).getRows();
      for (const [id, value] of rows) {
        values.set(Number(id), String(value));
        this.remember(String(value), Number(id));
      }
    }
    for (const c of missing) if (!values.has(c)) throw new Error(`dimension code ${c} is not in the dictionary`);
    return values;
  }

  /**
   * The codes of an append's values, on the writer inside its transaction: cached, else found in
   * dim_values, else assigned. Call `committed` or `rolledBack` with the batch when it ends.
   */
  async encode(writer: DuckDBConnection, values: ReadonlySet<string>): Promise<DictionaryBatch> {
    const codes = await this.codesOf(writer, values);
    const added: [number, string][] = [];
    /** Stored form -> its new code: two forms of one new value in this append get one code. */
    const fresh = new Map<string, number>();
    for (const v of values) {
      if (codes.has(v)) continue;
      const stored = wellFormed(v);
      let code = fresh.get(stored);
      if (code === undefined) {
        code = this.nextCode++;
        fresh.set(stored, code);
        added.push([code, stored]);
        // Before the spans commit: a reader that could see them sees the value known.
        this.known?.add(stored);
      }
      codes.set(v, code);
    }
    return { codes, added };
  }

  /** The batch's spans and new values are stored: its new values may be cached. */
  committed(batch: DictionaryBatch): void {
    for (const [code, value] of batch.added) this.remember(value, code);
  }

  /** The batch's transaction rolled back: its new codes are assigned again by a later append. */
  rolledBack(batch: DictionaryBatch): void {
    const first = batch.added[0]?.[0];
    if (first !== undefined) this.nextCode = first;
  }
}
