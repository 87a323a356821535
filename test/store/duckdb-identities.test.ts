/**
 * How the DuckDB writer recognizes spans stored already (identities.ts, recent-spans.ts): what it
 * remembers is bounded and never decides alone (a process that opens a file remembers nothing of
 * it; a day dropped to stay under the bound is looked up instead), a write waiting for its turn is
 * withdrawn by its signal while one under way is not, and a file written before identities keeps
 * one copy of each span it stored twice, with statistics that count it once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { RecentSpans, fingerprint } from '../../src/store/duckdb/recent-spans.ts';
import { rangesOf } from '../../src/store/duckdb/identities.ts';
import { MEASURES, QueryCancelledError, type AggregateQuery, type SpanRow } from '../../src/store/trace-port.ts';
import { END, generated } from '../contract/trace-contract.ts';
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
const open = (file: string) =>
  DuckDbTraceStore.open(file, { sealEveryMs: 0, now: () => END * 1000, identityWindowDays: 20 });
const everything: AggregateQuery = {
  orgId: 'org-1',
  skill: 'sk-a',
  startS: END - 30 * 86400,
  endS: END,
  workspaceIds: ['ws-1', 'ws-2'],
  filters: [],
  groupBy: ['model'],
  bucket: 'day',
  measures: [...MEASURES],
};

describe('what the DuckDB writer remembers of the spans it committed', () => {
  it('recognizes spans a closed process stored, after the file is opened again (nothing is loaded)', async () => {
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

  it('keeps at most maxKeys fingerprints, dropping whole days, oldest first', () => {
    const now = END;
    const recent = new RecentSpans({ windowDays: 3, maxKeys: 100, nowS: now, storedUpToS: null });
    const day = (d: number) => now - d * 86400;
    for (let i = 0; i < 60; i++) recent.add(day(2), ...fingerprint('o', `t${i}`, 's', day(2)));
    for (let i = 0; i < 60; i++) recent.add(day(1), ...fingerprint('o', `t${i}`, 's', day(1)));
    expect(recent.stats.keys).toBe(60);
    // The oldest day went: it is looked up from now on; yesterday is still remembered.
    expect(recent.covers(day(2))).toBe(false);
    expect(recent.covers(day(1))).toBe(true);
    expect(recent.mayHold(day(1), ...fingerprint('o', 't5', 's', day(1)))).toBe(true);
    expect(recent.mayHold(day(1), ...fingerprint('o', 't5', 's', day(1) + 1))).toBe(false);
    // Days leave the window as time passes; spans stored before the process are never covered.
    recent.expire(now + 2 * 86400);
    expect(recent.covers(day(1))).toBe(false);
    expect(recent.stats.keys).toBe(0);
    const reopened = new RecentSpans({ windowDays: 3, maxKeys: 100, nowS: now, storedUpToS: now - 10 });
    expect(reopened.covers(now - 10)).toBe(false);
    expect(reopened.covers(now - 9)).toBe(true);
  });

  it('tells identities apart field by field, and a table grows past its first size', () => {
    expect(fingerprint('ab', 'c', 's', 1)).not.toEqual(fingerprint('a', 'bc', 's', 1));
    expect(fingerprint('o', 't', 's', 1)).not.toEqual(fingerprint('o', 't', 's', 10));
    const recent = new RecentSpans({ windowDays: 1, maxKeys: 1_000_000, nowS: END, storedUpToS: null });
    for (let i = 0; i < 5000; i++) recent.add(END, ...fingerprint('o', `t${i}`, `s${i}`, END));
    expect(recent.stats.keys).toBe(5000);
    for (let i = 0; i < 5000; i += 499)
      expect(recent.mayHold(END, ...fingerprint('o', `t${i}`, `s${i}`, END))).toBe(true);
    expect(recent.mayHold(END, ...fingerprint('o', 't1', 's2', END))).toBe(false);
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
