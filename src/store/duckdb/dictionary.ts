/**
 * Integer codes for the low-cardinality dimensions (harness, skill, command, mcp, tool, model):
 * grouping and filtering on integers costs DuckDB ~15% less than on strings. The whole dictionary
 * lives in memory in the engine's thread (table `dim_values`, one row per value, codes from 1);
 * codes are assigned while appending and written in the same transaction as the spans, and never
 * change. Users and sessions, whose counts have no bound, stay strings.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Dimension, SpanRow } from '../trace-port.ts';

export const ENCODED = ['harness', 'skill', 'command', 'mcp', 'tool', 'model'] as const satisfies readonly (Dimension & keyof SpanRow)[];
export type EncodedDimension = (typeof ENCODED)[number];

/** A code no value has: an unknown filter value matches no row. */
const NO_CODE = 0;

export const isEncoded = (d: Dimension): d is EncodedDimension => (ENCODED as readonly Dimension[]).includes(d);

export class Dictionary {
  private readonly codes = new Map<string, number>();
  private readonly values: string[] = [''];

  static async load(conn: DuckDBConnection): Promise<Dictionary> {
    const dict = new Dictionary();
    const rows = (await conn.runAndReadAll('SELECT id, value FROM dim_values ORDER BY id')).getRows();
    for (const [id, value] of rows) dict.set(Number(id), String(value));
    return dict;
  }

  private set(code: number, value: string): void {
    this.codes.set(value, code);
    this.values[code] = value;
  }

  /** The code of `value`, assigning the next one (and recording it in `added`) for a new value. */
  encode(value: string | null, added: [number, string][]): number | null {
    if (value === null) return null;
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.set(code, value);
      added.push([code, value]);
    }
    return code;
  }

  /** The code of a value to filter on, NO_CODE when no stored span has it. */
  lookup(value: string | number): number {
    return this.codes.get(String(value)) ?? NO_CODE;
  }

  decode(code: number): string {
    const value = this.values[code];
    if (code === NO_CODE || value === undefined) throw new Error(`dimension code ${code} is not in the dictionary`);
    return value;
  }

  /** Takes back codes assigned for a transaction that rolled back. */
  forget(added: [number, string][]): void {
    for (const [, value] of added) this.codes.delete(value);
    const first = added[0]?.[0];
    if (first !== undefined) this.values.length = first;
  }
}
