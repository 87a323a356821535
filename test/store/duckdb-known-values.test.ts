/**
 * KnownValues (src/store/duckdb/known-values.ts): the service's thread tells a value no stored span
 * names without asking the engine's thread. It never misses a value the dictionary holds: the
 * values stored before an open (read a page at a time), those first named after it, in another
 * thread than the one that added them. Usage of servers none of whose ids it holds is answered
 * without a round trip; a store that is down or a deadline that passed still answer as they did.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { Dictionary } from '../../src/store/duckdb/dictionary.ts';
import { KnownValues } from '../../src/store/duckdb/known-values.ts';
import { ThreadedTraceStore } from '../../src/store/duckdb/threaded-store.ts';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { QueryCancelledError, TraceStoreUnavailableError, type SpanRow } from '../../src/store/trace-port.ts';
import { toolCallRow } from '../fixtures/span-row.ts';

const NOW_S = Math.floor(Date.now() / 1000);
const scope = { orgId: 'org-k', workspaceIds: ['ws-k'], sinceS: NOW_S - 86_400 };
const calls = (mcp: string, n: number, from = 0): SpanRow[] =>
  Array.from({ length: n }, (_, i) =>
    toolCallRow(from + i, 'search', mcp, { org_id: 'org-k', workspace_id: 'ws-k', start_s: NOW_S - 60 - i }),
  );
const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-known-')), 'traces.duckdb');

describe('KnownValues', () => {
  it('holds every value added, and few others', () => {
    const known = KnownValues.create(1 << 16);
    const added = Array.from({ length: 20_000 }, (_, i) => `mcp-${i}`);
    expect(added.filter((v) => known.mayHold(v))).toEqual([]);
    for (const v of added) known.add(v);
    expect(added.filter((v) => !known.mayHold(v))).toEqual([]);
    // 20,000 values in 2^19 bits with 4 hashes: about 0.1 % of other values held by chance.
    const others = Array.from({ length: 20_000 }, (_, i) => `other-${i}`).filter((v) => known.mayHold(v));
    expect(others.length).toBeLessThan(100);
    expect(['', 'é', '\ud800', 'mcp-19999 '].map((v) => known.mayHold(v))).toEqual([false, false, false, false]);
  });

  it('shares its memory: a filter over the same buffer holds what the first added', () => {
    const known = KnownValues.create(1024);
    known.add('github');
    expect(KnownValues.over(known.buffer).mayHold('github')).toBe(true);
    expect(() => KnownValues.create(1000)).toThrow(RangeError);
    expect(() => KnownValues.create(2)).toThrow(RangeError);
  });

  it('a dictionary loading tells it of every stored value, a page at a time', async () => {
    const file = tempFile();
    const store = await DuckDbTraceStore.open(file, { sealEveryMs: 0 });
    const servers = Array.from({ length: 50 }, (_, i) => `srv-${i}`);
    await store.insertSpans(servers.flatMap((s, i) => calls(s, 1, i)));
    await store.close();
    const instance = await DuckDBInstance.create(file);
    const conn = await instance.connect();
    try {
      for (const page of [1, 7, 100_000]) {
        const known = KnownValues.create(1024);
        await Dictionary.load(conn, 3, known, page);
        expect(
          servers.filter((s) => !known.mayHold(s)),
          `pages of ${page}`,
        ).toEqual([]);
        expect(known.mayHold('search')).toBe(true);
      }
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});

describe('server usage on the worker thread', () => {
  let store: ThreadedTraceStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  /** Messages the store posts to its engine's thread while `work` runs. */
  async function postedDuring(s: ThreadedTraceStore, work: () => Promise<unknown>): Promise<number> {
    const worker = (s as unknown as { worker: Worker }).worker;
    const post = worker.postMessage.bind(worker);
    let posted = 0;
    worker.postMessage = (...args: Parameters<Worker['postMessage']>) => {
      posted++;
      post(...args);
    };
    try {
      await work();
    } finally {
      worker.postMessage = post;
    }
    return posted;
  }

  it('servers no stored span names: no calls, without a round trip; a named one is asked about', async () => {
    store = await ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 });
    const s = store;
    await s.insertSpans(calls('github', 3));
    const unnamed = Array.from({ length: 100 }, (_, i) => `mcp-unused-${i}`);
    let answer: unknown;
    expect(await postedDuring(s, async () => (answer = await s.serverUsage({ ...scope, servers: unnamed })))).toBe(0);
    expect(answer).toEqual([]);
    expect(
      await postedDuring(s, async () => (answer = await s.serverUsage({ ...scope, servers: [...unnamed, 'github'] }))),
    ).toBe(1);
    expect(answer).toMatchObject([{ server: 'github', calls: 3 }]);
  });

  it('a server first named after the store opened, and one named before it reopened, are counted', async () => {
    const file = tempFile();
    store = await ThreadedTraceStore.open(file, { sealEveryMs: 0 });
    await store.insertSpans(calls('jira', 2));
    expect(await store.serverUsage({ ...scope, servers: ['jira'] })).toMatchObject([{ server: 'jira', calls: 2 }]);
    await store.close();
    store = await ThreadedTraceStore.open(file, { sealEveryMs: 0 });
    expect(await store.serverUsage({ ...scope, servers: ['jira', 'slack'] })).toMatchObject([
      { server: 'jira', calls: 2 },
    ]);
  });

  it('a store that is down, or a request past its deadline, fails as when the engine is asked', async () => {
    store = await ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 });
    const aborted = AbortSignal.abort();
    await expect(store.serverUsage({ ...scope, servers: ['none'] }, aborted)).rejects.toThrow(QueryCancelledError);
    await store.close();
    await expect(store.serverUsage({ ...scope, servers: ['none'] })).rejects.toThrow(TraceStoreUnavailableError);
  });
});
