/**
 * The DuckDB engine's dictionary is a bounded cache over `dim_values` (DESIGN §12): with room for
 * a few dozen values and thousands of distinct ones, every answer stays exact against the
 * TypeScript reference (grouped by an encoded dimension, filtered by and ranked on values the
 * cache evicted long ago, after a failed append, after reopening the file), every value keeps one
 * code, and the values held in memory never exceed the bound.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import type { AggregateQuery, SpanRow } from '../../src/store/trace-port.ts';
import { expectSameRows, reference } from '../contract/trace-reference.ts';
import { spanRow } from '../fixtures/span-row.ts';

const CAP = 40;
const END = Date.UTC(2026, 10, 1) / 1000;
const base: AggregateQuery = {
  orgId: 'org-d',
  subject: { skill: 'sk-d' },
  startS: END - 4 * 86400,
  endS: END,
  workspaceIds: ['ws-d'],
  filters: [],
  groupBy: [],
  measures: ['spans', 'traces', 'tokens', 'error_rate', 'latency_p90'],
};

/** Traces `from` to `to` of skill sk-d: an invocation and two tool calls, about one new tool value per span. */
function spans(from: number, to: number): SpanRow[] {
  const rows: SpanRow[] = [];
  for (let t = from; t < to; t++) {
    const common = {
      org_id: 'org-d',
      workspace_id: 'ws-d',
      name: 'x',
      start_s: END - 86400 * (1 + (t % 3)) + t,
      duration_ms: (t * 7) % 50,
      harness: `harness-${t % 5}`,
      skill: 'sk-d',
      skill_version: 1 + (t % 2),
      mcp: `mcp-${t % 90}`,
      user: `u${t % 7}`,
      session: `s${t}`,
      tokens: t % 13,
      is_error: t % 4 === 0,
    };
    rows.push(
      spanRow(t, {
        ...common,
        span_id: `${t}a`.padStart(16, '0'),
        category: 'skill_invocation',
        model: `model-${t % 300}`,
      }),
    );
    for (const c of [0, 1]) {
      rows.push(
        spanRow(t, {
          ...common,
          span_id: `${t}b${c}`.padStart(16, '0'),
          category: 'tool_call',
          tool: `tool-${(2 * t + c) % 1500}`,
          is_error: (t + c) % 5 === 0,
        }),
      );
    }
  }
  return rows;
}

const QUERIES: AggregateQuery[] = [
  { ...base, groupBy: ['tool'] },
  { ...base, groupBy: ['model', 'harness'], bucket: 'day' },
  { ...base, groupBy: ['tool'], filters: [{ key: 'tool', op: 'eq', values: ['tool-3'] }] },
  {
    ...base,
    groupBy: ['mcp'],
    filters: [{ key: 'tool', op: 'in', values: ['tool-1', 'tool-700', 'tool-1499', 'no-such-tool'] }],
  },
  {
    ...base,
    filters: [
      { key: 'model', op: 'neq', values: ['model-2'] },
      { key: 'harness', op: 'eq', values: ['harness-1'] },
    ],
  },
  {
    ...base,
    groupBy: ['tool'],
    top: [
      { by: 'tool', direction: 'asc', limit: 25 },
      { by: 'spans', direction: 'desc', limit: 10 },
    ],
  },
  { ...base, groupBy: ['model'], bucket: 'day', top: [{ by: 'error_rate', direction: 'desc', limit: 7 }] },
  {
    ...base,
    groupBy: ['tool', 'mcp'],
    onlyGroups: [
      { tool: 'tool-4', mcp: 'mcp-2' },
      { tool: 'tool-901', mcp: 'mcp-0' },
      { tool: null, mcp: 'mcp-5' },
      { tool: 'no-such-tool', mcp: 'mcp-2' },
    ],
  },
];

async function expectExact(store: DuckDbTraceStore, stored: SpanRow[]): Promise<void> {
  for (const q of QUERIES) {
    expectSameRows(await store.aggregate(q), reference(stored, q));
    expect(store.dictionarySize).toBeLessThanOrEqual(CAP);
  }
}

async function dictionaryRows(store: DuckDbTraceStore): Promise<{ n: number; values: number; codes: number }> {
  const conn = await store.connect();
  try {
    const [row] = (
      await conn.runAndReadAll(
        'SELECT count(*) AS n, count(DISTINCT value) AS "values", count(DISTINCT id) AS codes FROM dim_values',
      )
    ).getRowObjectsJS();
    return { n: Number(row?.n), values: Number(row?.values), codes: Number(row?.codes) };
  } finally {
    conn.closeSync();
  }
}

/** Distinct values of the encoded dimensions in `rows` (one dictionary for all of them). */
const distinctValues = (rows: SpanRow[]) =>
  new Set(rows.flatMap((r) => [r.harness, r.skill, r.command, r.mcp, r.tool, r.model]).filter((v) => v !== null)).size;

describe('DuckDB dictionary: a bounded cache over dim_values', () => {
  it(`answers exactly with room for ${CAP} values and thousands stored, across a failed append and a reopen`, async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dict-cache-')), 'traces.duckdb');
    const stored: SpanRow[] = [];
    let store = await DuckDbTraceStore.open(file, { sealEveryMs: 0, dictionaryValues: CAP });
    try {
      for (let t = 0; t < 1200; t += 150) {
        const batch = spans(t, t + 150);
        await store.insertSpans(batch);
        stored.push(...batch);
        expect(store.dictionarySize).toBeLessThanOrEqual(CAP);
        if (t === 600) await store.seal();
      }
      await expectExact(store, stored);

      // A failed append takes back its new codes; evicted values it used keep theirs.
      const failing = spans(1200, 1300);
      const conn = await store.connect();
      await conn.run('ALTER TABLE trace_skills RENAME TO trace_skills_away');
      await expect(store.insertSpans(failing)).rejects.toThrow(/trace_skills/);
      await conn.run('ALTER TABLE trace_skills_away RENAME TO trace_skills');
      conn.closeSync();
      expect(store.dictionarySize).toBeLessThanOrEqual(CAP);
      await store.insertSpans(failing);
      stored.push(...failing);
      await expectExact(store, stored);
      await store.close();

      store = await DuckDbTraceStore.open(file, { sealEveryMs: 0, dictionaryValues: CAP });
      expect(store.dictionarySize).toBeLessThanOrEqual(CAP);
      await expectExact(store, stored);
      // Values evicted long ago (and new ones) arrive again after the restart: same codes, no duplicates.
      const again = spans(0, 100).map((r) => ({ ...r, trace_id: `f${r.trace_id.slice(1)}` }));
      await store.insertSpans([...again, ...spans(1300, 1400)]);
      stored.push(...again, ...spans(1300, 1400));
      await expectExact(store, stored);
      await store.seal();
      await expectExact(store, stored);
      const dictionary = await dictionaryRows(store);
      expect(dictionary).toEqual({
        n: distinctValues(stored),
        values: distinctValues(stored),
        codes: distinctValues(stored),
      });
      expect(dictionary.n).toBeGreaterThan(40 * CAP);
    } finally {
      await store.close();
    }
  });

  it('opens with at most its capacity in memory, and works with none', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dict-open-')), 'traces.duckdb');
    const rows = spans(0, 300);
    const big = await DuckDbTraceStore.open(file, { sealEveryMs: 0 });
    await big.insertSpans(rows);
    expect(big.dictionarySize).toBe(distinctValues(rows));
    await big.close();
    for (const capacity of [CAP, 0]) {
      const store = await DuckDbTraceStore.open(file, { sealEveryMs: 0, dictionaryValues: capacity });
      try {
        expect(store.dictionarySize).toBe(capacity);
        const q: AggregateQuery = {
          ...base,
          groupBy: ['tool'],
          filters: [{ key: 'model', op: 'in', values: ['model-1', 'model-299'] }],
        };
        expectSameRows(await store.aggregate(q), reference(rows, q));
        expect(store.dictionarySize).toBeLessThanOrEqual(capacity);
      } finally {
        await store.close();
      }
    }
  });

  it('refuses a capacity or memory limit that is not a count', async () => {
    await expect(DuckDbTraceStore.open(':memory:', { dictionaryValues: -1 })).rejects.toThrow(/dictionaryValues/);
    await expect(DuckDbTraceStore.open(':memory:', { memoryLimitMb: 0 })).rejects.toThrow(/memoryLimitMb/);
  });

  it('sets DuckDB memory_limit', async () => {
    const store = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0, memoryLimitMb: 300 });
    try {
      const conn = await store.connect();
      const [row] = (await conn.runAndReadAll("SELECT current_setting('memory_limit') AS m")).getRowObjectsJS();
      conn.closeSync();
      expect(row?.m).toMatch(/^(300\.0 MiB|314\.5 MB)$/);
    } finally {
      await store.close();
    }
  });
});
