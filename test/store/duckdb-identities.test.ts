/**
 * How the DuckDB writer recognizes rows stored already (identities.ts, day-identities.ts): each
 * day of stored identities is read from the file once, then held (so spans scattered over many
 * days cost one load per day, not a read of the table per write), within a bound of fingerprints
 * (days checked longest ago dropped and loaded again; a day too large looked up instead); a
 * process that opens a file holds nothing of it until it loads; a write waiting for its turn is
 * withdrawn by its signal while one under way is not; and a file written before identities keeps
 * one copy of each span it stored twice, with statistics that count it once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { DayIdentities, PRINT_WORDS, fingerprintInto } from '../../src/store/duckdb/day-identities.ts';
import { rangesOf } from '../../src/store/duckdb/identities.ts';
import { QueryCancelledError, type SpanRow } from '../../src/store/trace-port.ts';
import { END, generated, skillQuery } from '../contract/trace-contract.ts';
import { expectSameRows, reference } from '../contract/trace-reference.ts';

const dirs: string[] = [];
const tempFile = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-identities-'));
  dirs.push(dir);
  return path.join(dir, 'traces.duckdb');
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const spans = generated()
  .filter((s) => s.org_id === 'org-1')
  .slice(0, 2000);
const open = (file: string, identityMaxKeys?: number) =>
  DuckDbTraceStore.open(file, { sealEveryMs: 0, ...(identityMaxKeys === undefined ? {} : { identityMaxKeys }) });
const print = (fields: string[], time: number) => {
  const out = new Uint32Array(PRINT_WORDS);
  fingerprintInto(out, 0, fields, time);
  return out;
};
const everything = skillQuery({ groupBy: ['model'], bucket: 'day' });

describe('what the DuckDB writer remembers of the spans it committed', () => {
  it('recognizes spans a closed process stored, after the file is opened again', async () => {
    const file = tempFile();
    const first = await open(file);
    expect(await first.insertSpans(spans.slice(0, 1500))).toEqual({ stored: 1500, duplicates: 0 });
    await first.close();
    const second = await open(file);
    expect(await second.insertSpans(spans.slice(1000, 2000))).toEqual({ stored: 500, duplicates: 500 });
    expect(await second.countSpans()).toBe(2000);
    expectSameRows(await second.aggregate(everything), reference(spans, everything));
    await second.close();
  });

  it('withdraws a write still waiting for its turn, never one under way', async () => {
    const store = await open(':memory:');
    const running = new AbortController();
    const waiting = new AbortController();
    // The first append is taken up at once; the second waits in the queue behind it.
    const first = store.insertSpans(spans.slice(0, 1000), running.signal);
    const second = store.insertSpans(spans.slice(1000, 2000), waiting.signal).then(
      () => null,
      (err: unknown) => err,
    );
    running.abort();
    waiting.abort();
    expect(await first).toEqual({ stored: 1000, duplicates: 0 });
    expect(await second).toBeInstanceOf(QueryCancelledError);
    expect(await store.countSpans()).toBe(1000);
    await store.close();
  });

  it('reads a day from the file once: spans scattered over many days cost a load per day, not a read per write', async () => {
    const store = await open(':memory:');
    // 300 spans, one every 2.4 hours back over 30 days, in batches of 20 with the days interleaved.
    const scattered = spans.slice(0, 300).map((s, i) => ({ ...s, start_s: END - ((i * 7) % 300) * 8640 }));
    const days = new Set(scattered.map((s) => Math.floor(s.start_s / 86400))).size;
    for (let i = 0; i < 300; i += 20) await store.insertSpans(scattered.slice(i, i + 20));
    const loaded = store.identityStats.spans.loads;
    expect(loaded).toBe(days);
    // Sent again, in other batches and another order: recognized, and no day read again.
    for (let i = 0; i < 300; i += 30) {
      const batch = scattered.slice(i, i + 30).reverse();
      expect(await store.insertSpans(batch)).toEqual({ stored: 0, duplicates: 30 });
    }
    expect(store.identityStats.spans.loads).toBe(loaded);
    expect(store.identityStats.spans.keys).toBe(300);
    await store.close();
  });

  it('holds at most maxKeys, dropping the days checked longest ago, and loads them again when needed', async () => {
    const loads: number[] = [];
    const stored = new Map<number, Uint32Array[]>();
    const held = new DayIdentities({
      maxKeys: 100,
      load: async (day, each) => {
        loads.push(day);
        for (const p of stored.get(day) ?? []) each(p, 1);
      },
    });
    const commit = (day: number, n: number) => {
      for (let i = 0; i < n; i++) {
        const p = print(['o', `t${day}-${i}`, 's'], day * 86400);
        stored.set(day, [...(stored.get(day) ?? []), p]);
        held.add(day, p, 0);
      }
      held.trim();
    };
    expect(await held.hold([1, 2])).toEqual(new Set());
    commit(1, 60);
    commit(2, 60);
    // 120 over 100: day 1, checked longer ago, went; day 2 is held with its 60.
    expect(held.stats).toMatchObject({ keys: 60, days: 1 });
    expect(held.isHeld(1)).toBe(false);
    expect(held.holds(2, print(['o', 't2-5', 's'], 2 * 86400), 0)).toBe(true);
    expect(held.holds(2, print(['o', 't2-5', 's'], 2 * 86400 + 1), 0)).toBe(false);
    // Day 1 checked again: loaded from the store whole, and day 2 dropped for it.
    await held.hold([1]);
    expect(loads).toEqual([1, 2, 1]);
    expect(held.holds(1, print(['o', 't1-59', 's'], 86400), 0)).toBe(true);
    expect(held.isHeld(2)).toBe(false);
    // A day larger than the bound alone is not held: its rows are looked up instead.
    commit(3, 0);
    stored.set(
      3,
      Array.from({ length: 150 }, (_, i) => print(['o', `big${i}`, 's'], 3 * 86400)),
    );
    expect(await held.hold([3])).toEqual(new Set([3]));
    expect(held.stats.keys).toBeLessThanOrEqual(100);
    // Retention: days before the cutoff are forgotten.
    held.forgetBefore(2 * 86400);
    expect(held.isHeld(1)).toBe(false);
  });

  it('tells identities apart field by field and by time', () => {
    expect(print(['ab', 'c', 's'], 1)).not.toEqual(print(['a', 'bc', 's'], 1));
    expect(print(['o', 't', 's'], 1)).not.toEqual(print(['o', 't', 's'], 10));
    expect(print(['o', 't', 's'], 2 ** 33)).not.toEqual(print(['o', 't', 's'], 2 ** 33 + 2 ** 32));
    expect(print(['o', 't', 's'], 7)).toEqual(print(['o', 't', 's'], 7));
  });

  it('looks rows up by at most 16 ranges of their times, split at gaps over an hour', () => {
    expect(rangesOf([10, 20, 4000, 5000, 100_000])).toEqual([
      [10, 20],
      [4000, 5000],
      [100_000, 100_000],
    ]);
    const scattered = Array.from({ length: 100 }, (_, i) => i * 86400);
    const ranges = rangesOf(scattered);
    expect(ranges).toHaveLength(16);
    expect(ranges[0]?.[0]).toBe(0);
    expect(ranges.at(-1)?.[1]).toBe(99 * 86400);
    for (const t of scattered) expect(ranges.some(([lo, hi]) => t >= lo && t <= hi)).toBe(true);
  });
});

describe('a file written before identities', () => {
  it('keeps one copy of each span stored twice, and statistics count it once after the upgrade', async () => {
    const file = tempFile();
    const store = await open(file);
    const stored: SpanRow[] = spans.slice(0, 1500);
    await store.insertSpans(stored);
    await store.seal();
    // As a release before identities stored resent spans: a second copy of 300 of them, sealed too,
    // and a migration not yet applied.
    const conn = await store.connect();
    await conn.run(`CREATE TEMP TABLE copies AS SELECT * FROM spans WHERE seq % 5 = 0`);
    await conn.run(`INSERT INTO spans SELECT seq + 100000, * EXCLUDE (seq) FROM copies`);
    await conn.run(`INSERT INTO trace_skills SELECT seq + 100000, * EXCLUDE (seq) FROM trace_skills WHERE seq % 5 = 0`);
    await conn.run(`DELETE FROM schema_migrations WHERE name = '004_identities'`);
    await conn.run(`ALTER TABLE metric_points DROP COLUMN point_key`);
    const copies = await conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM spans');
    expect(copies.getRowObjectsJS()[0]?.n).toBe(1800);
    conn.closeSync();
    await store.close();
    const upgraded = await open(file);
    expect(await upgraded.countSpans()).toBe(1500);
    expectSameRows(await upgraded.aggregate(everything), reference(stored, everything));
    expect(await upgraded.insertSpans(stored.slice(0, 100))).toEqual({ stored: 0, duplicates: 100 });
    await upgraded.close();
  });
});
