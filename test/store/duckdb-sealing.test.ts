/**
 * DuckDB sealing keeps statistics exact whatever order spans arrive in: children before their
 * skill invocation (as OTLP exporters send them), a second skill or a new version named after a
 * trace's spans were sealed, traces across days sealed in several steps, seals at any point, a
 * restart, and a file from the version 1 schema.
 * Every answer is compared with the TypeScript reference over the spans stored so far.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { ThreadedTraceStore } from '../../src/store/duckdb/threaded-store.ts';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import {
  QueryCancelledError,
  TraceStoreUnavailableError,
  type AggregateQuery,
  type SpanRow,
} from '../../src/store/trace-port.ts';
import { expectSameRows, reference } from '../contract/trace-reference.ts';
import {
  QUERIES,
  base,
  beforeLaterColumns,
  spans,
  expectExactInAnyOrder,
  expectLateSkillCountedOnce,
} from './sealing-fixture.ts';

async function expectExact(store: DuckDbTraceStore, stored: SpanRow[]): Promise<void> {
  for (const q of QUERIES) expectSameRows(await store.aggregate(q), reference(stored, q));
}

describe('DuckDB sealing', () => {
  it.each([1, 2, 3, 4])('answers exactly for spans in any order with seals anywhere (seed %i)', async (seed) => {
    const store = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    try {
      await expectExactInAnyOrder(store, seed, { checkChance: 0.25, seal: () => store.seal() });
      expect(await store.countSpans()).toBe(spans(seed).length);
    } finally {
      await store.close();
    }
  });

  it('counts a trace for a skill named after its spans were sealed, exactly once', async () => {
    const store = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    try {
      await expectLateSkillCountedOnce(store, () => store.seal());
    } finally {
      await store.close();
    }
  });

  it('seals by age on its timer, and a restart seals whatever was left', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-seal-'));
    const file = path.join(dir, 'traces.duckdb');
    const all = spans(11);
    const store = await DuckDbTraceStore.open(file, { sealAgeMs: 0, sealEveryMs: 20 });
    await store.insertSpans(all.slice(0, 2000));
    await expect.poll(() => sealedCount(store), { timeout: 5000 }).toBeGreaterThan(0);
    await store.insertSpans(all.slice(2000));
    await store.close();
    const reopened = await DuckDbTraceStore.open(file, { sealEveryMs: 0 });
    try {
      expect(await unsealed(reopened)).toBe(0);
      await expectExact(reopened, all);
    } finally {
      await reopened.close();
    }
  });

  it('refuses a batch it cannot store (malformed trace id, values out of range) alone, not the batches committed with it', async () => {
    const store = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    try {
      const [invocation] = spans(3).filter((r) => r.category === 'skill_invocation');
      const good = invocation as SpanRow;
      const results = await Promise.allSettled([
        store.insertSpans([good]),
        store.insertSpans([{ ...good, trace_id: 'not hex' }]),
        store.insertSpans([{ ...good, skill_version: 2 ** 40 }]),
        store.insertSpans([{ ...good, tokens: 2 ** 64 }]),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
      expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/trace_id must be 32 lowercase hex digits/);
      expect(await store.countSpans()).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('takes back the dimension codes of an append that fails, so a later one stores them, across a restart', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dict-')), 'traces.duckdb');
    const store = await DuckDbTraceStore.open(file, { sealEveryMs: 0 });
    const [invocation] = spans(3).filter((r) => r.category === 'skill_invocation' && r.skill === 'sk-a');
    const good = { ...(invocation as SpanRow), model: 'model-new' };
    const conn = await store.connect();
    await conn.run('ALTER TABLE trace_skills RENAME TO trace_skills_away');
    await expect(store.insertSpans([good])).rejects.toThrow(/trace_skills/);
    await conn.run('ALTER TABLE trace_skills_away RENAME TO trace_skills');
    conn.closeSync();
    expect(await store.countSpans()).toBe(0);
    await store.insertSpans([good]);
    await store.close();
    const reopened = await DuckDbTraceStore.open(file, { sealEveryMs: 0 });
    try {
      const q: AggregateQuery = {
        ...base,
        startS: good.start_s,
        endS: good.start_s + 1,
        groupBy: ['model'],
        measures: ['spans'],
      };
      expect(await reopened.aggregate(q)).toEqual([
        { groups: { model: 'model-new' }, bucket: null, values: { spans: 1 } },
      ]);
      expect(
        await reopened.aggregate({ ...q, filters: [{ key: 'model', op: 'eq', values: ['model-new'] }] }),
      ).toHaveLength(1);
    } finally {
      await reopened.close();
    }
  });

  it.each([
    ['in this thread', false],
    ['in its worker thread', true],
  ] as const)('cancels a query aborted right after it starts (%s)', async (_name, threaded) => {
    const store = threaded
      ? await ThreadedTraceStore.open(':memory:', { sealEveryMs: 0 })
      : await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    try {
      await store.insertSpans(spans(2));
      for (let i = 0; i < 10; i++) {
        const controller = new AbortController();
        const pending = store.aggregate(base, controller.signal);
        controller.abort();
        await expect(pending).rejects.toBeInstanceOf(QueryCancelledError);
      }
      expect((await store.aggregate(base))[0]?.values.spans).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it('in its worker thread: an open that fails rejects, and calls after close are refused as unavailable', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-threaded-'));
    await expect(ThreadedTraceStore.open(dir, { sealEveryMs: 0 })).rejects.toThrow();
    const store = await ThreadedTraceStore.open(path.join(dir, 'traces.duckdb'), { sealEveryMs: 0 });
    await store.insertSpans(spans(19).slice(0, 10));
    expect(await store.countSpans()).toBe(10);
    await store.close();
    await store.close();
    await expect(store.insertSpans(spans(19).slice(10, 20))).rejects.toBeInstanceOf(TraceStoreUnavailableError);
    await expect(store.aggregate(base)).rejects.toBeInstanceOf(TraceStoreUnavailableError);
  });

  it('keeps sealing while appends never stop', async () => {
    const store = await DuckDbTraceStore.open(':memory:', { sealAgeMs: 0, sealEveryMs: 50 });
    try {
      const all = spans(17);
      const stopAt = Date.now() + 2500;
      let sealedDuringLoad = 0;
      const writers = [0, 1, 2, 3].map(async (w) => {
        for (let i = w; Date.now() < stopAt; i += 4)
          await store.insertSpans(
            all
              .slice((i * 50) % 1500, ((i * 50) % 1500) + 50)
              .map((r) => ({ ...r, span_id: `${r.span_id.slice(0, 8)}${String(i).padStart(8, '0')}` })),
          );
      });
      const watcher = (async () => {
        while (Date.now() < stopAt) {
          sealedDuringLoad = await sealedCount(store);
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      await Promise.all([...writers, watcher]);
      expect(sealedDuringLoad).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it('says when background sealing fails, and keeps answering exactly from the unsealed spans', async () => {
    const notices: string[] = [];
    const store = await DuckDbTraceStore.open(':memory:', {
      sealAgeMs: 0,
      sealEveryMs: 20,
      onNotice: (n) => notices.push(n),
    });
    try {
      const conn = await store.connect();
      await conn.run('DROP TABLE skill_crossing');
      conn.closeSync();
      const all = spans(13);
      await store.insertSpans(all);
      await expect.poll(() => notices.length, { timeout: 5000 }).toBeGreaterThan(0);
      expect(notices[0]).toMatch(
        /^sealing failed \(statistics stay exact but slower until it succeeds\): .*skill_crossing/,
      );
      await expectExact(store, all);
    } finally {
      await store.close();
    }
  });

  it('migrates a version 1 file: spans, mappings and answers are kept', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-migrate-'));
    const file = path.join(dir, 'traces.duckdb');
    const all = beforeLaterColumns(spans(5));
    await writeVersion1(file, all);
    const notices: string[] = [];
    const store = await DuckDbTraceStore.open(file, { sealEveryMs: 0, onNotice: (n) => notices.push(n) });
    expect(notices).toContain(
      'migrating the trace store to 002_sealed_skill_spans (once; existing spans are rewritten)',
    );
    try {
      expect(await store.countSpans()).toBe(all.length);
      expect(await unsealed(store)).toBe(0);
      await expectExact(store, all);
      await store.insertSpans(spans(6).map((r) => ({ ...r, trace_id: `e${r.trace_id.slice(1)}` })));
      expect(await store.countSpans()).toBe(all.length + spans(6).length);
    } finally {
      await store.close();
    }
  });
});

async function sealedCount(store: DuckDbTraceStore): Promise<number> {
  const conn = await store.connect();
  try {
    return Number((await conn.runAndReadAll('SELECT seq FROM sealed')).getRows()[0]?.[0] ?? 0);
  } finally {
    conn.closeSync();
  }
}

async function unsealed(store: DuckDbTraceStore): Promise<number> {
  const conn = await store.connect();
  try {
    return Number(
      (await conn.runAndReadAll('SELECT count(*) FROM spans WHERE seq > (SELECT seq FROM sealed)')).getRows()[0]?.[0] ??
        0,
    );
  } finally {
    conn.closeSync();
  }
}

/** A database as the version 1 engine left it: its two tables, filled with plain INSERTs. */
async function writeVersion1(file: string, rows: SpanRow[]): Promise<void> {
  const instance = await DuckDBInstance.create(file);
  const conn = await instance.connect();
  await conn.run(`CREATE TABLE schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP);
CREATE TABLE spans (
  org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, trace_id VARCHAR NOT NULL, span_id VARCHAR NOT NULL,
  parent_span_id VARCHAR, name VARCHAR, start_s BIGINT NOT NULL, duration_ms DOUBLE NOT NULL, category VARCHAR NOT NULL,
  harness VARCHAR, skill VARCHAR, skill_version INTEGER, command VARCHAR, mcp VARCHAR, tool VARCHAR, model VARCHAR,
  user_id VARCHAR, session_id VARCHAR, tokens BIGINT NOT NULL, cost DOUBLE NOT NULL, is_error BOOLEAN NOT NULL);
CREATE TABLE trace_skills (org_id VARCHAR NOT NULL, skill VARCHAR NOT NULL, skill_version INTEGER, trace_id VARCHAR NOT NULL, start_s BIGINT NOT NULL);
INSERT INTO schema_migrations VALUES ('001_spans', now());`);
  const appender = await conn.createAppender('spans');
  for (const r of rows) {
    for (const v of [r.org_id, r.workspace_id, r.trace_id, r.span_id, r.parent_span_id, r.name])
      if (v === null) appender.appendNull();
      else appender.appendVarchar(v);
    appender.appendBigInt(BigInt(r.start_s));
    appender.appendDouble(r.duration_ms);
    appender.appendVarchar(r.category);
    for (const v of [r.harness, r.skill])
      if (v === null) appender.appendNull();
      else appender.appendVarchar(v);
    if (r.skill_version === null) appender.appendNull();
    else appender.appendInteger(r.skill_version);
    for (const v of [r.command, r.mcp, r.tool, r.model, r.user, r.session])
      if (v === null) appender.appendNull();
      else appender.appendVarchar(v);
    appender.appendBigInt(BigInt(r.tokens));
    appender.appendDouble(r.cost);
    appender.appendBoolean(r.is_error);
    appender.endRow();
  }
  appender.closeSync();
  const mapper = await conn.createAppender('trace_skills');
  for (const r of rows.filter((x) => x.category === 'skill_invocation' && x.skill !== null)) {
    mapper.appendVarchar(r.org_id);
    mapper.appendVarchar(r.skill as string);
    if (r.skill_version === null) mapper.appendNull();
    else mapper.appendInteger(r.skill_version);
    mapper.appendVarchar(r.trace_id);
    mapper.appendBigInt(BigInt(r.start_s));
    mapper.endRow();
  }
  mapper.closeSync();
  conn.closeSync();
  instance.closeSync();
}
