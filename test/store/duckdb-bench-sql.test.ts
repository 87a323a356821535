/**
 * The benchmarks' two ways to run SQL in the DuckDB engine thread (ThreadedTraceStore): the
 * statistics compiler's own statements (`runCompiled`, only text `compile` handed out) and one
 * SELECT written by hand (`runSelect`); nothing else runs through them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThreadedTraceStore } from '../../src/store/duckdb/threaded-store.ts';
import { spanRow } from '../fixtures/span-row.ts';

let store: ThreadedTraceStore;

beforeAll(async () => {
  store = await ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 });
  await store.insertSpans([1, 2, 3].map((n) => spanRow(n, { agent: 'agent-1', start_s: 1000 + n })));
});
afterAll(async () => {
  await store.close();
});

describe('SQL of the benchmarks in the engine thread', () => {
  it('runSelect runs one SELECT with its parameters and answers its row count', async () => {
    const sql = 'SELECT trace_key FROM trace_agents WHERE org_id = $1 AND start_s > $2';
    expect(await store.runSelect({ sql, params: ['org-a', 1001] })).toBe(2);
  });

  it('runSelect refuses anything but exactly one SELECT, and changes nothing', async () => {
    for (const sql of ['DELETE FROM spans', 'SELECT 1; DELETE FROM spans', 'CREATE TABLE x (a INTEGER)'])
      await expect(store.runSelect({ sql, params: [] }), sql).rejects.toThrow(/one SELECT statement only/);
    expect(await store.countSpans()).toBe(3);
  });

  it('runCompiled refuses text the compiler did not hand out', async () => {
    await expect(store.runCompiled({ sql: 'SELECT 1', params: [] })).rejects.toThrow(/compile\(\) produced/);
  });
});
