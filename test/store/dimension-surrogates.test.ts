/**
 * Dimension values that differ only by lone UTF-16 surrogates ("lookup-\ud800", "lookup-\udc00")
 * are one stored text (U+FFFD in their place) on every engine, so they are one value: DuckDB's
 * dictionary (duckdb/dictionary.ts) gives them one code, in one append, across appends and after a
 * reopen, whether its cache holds the value or not; statistics group them as one and usage counts
 * every call, asked by the stored form or by any lone form. On DuckDB and PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import type { AggregateQuery, SpanRow, TraceStore } from '../../src/store/trace-port.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';
import { spanRow, toolCallRow } from '../fixtures/span-row.ts';

const NOW_S = Math.floor(Date.now() / 1000);
const TRACE = 'ab'.repeat(16);
const scope = { orgId: 'org-a', workspaceIds: ['ws-a-team'], sinceS: NOW_S - 86_400 };
const TOOL = 'lookup-\ufffd';
const SERVER = 'srv-\ufffd';

/** A skill invocation of sk-d and its tool calls `[tool, server]`, numbered from `from`, in one trace. */
function calls(from: number, names: [string, string][]): SpanRow[] {
  const at = { trace_id: TRACE, start_s: NOW_S - 600 };
  return [
    spanRow(from, { ...at, category: 'skill_invocation', skill: 'sk-d', skill_version: 1 }),
    ...names.map(([tool, mcp], i) => toolCallRow(from + 1 + i, tool, mcp, { ...at, start_s: NOW_S - 500 + i })),
  ];
}

const byTool: AggregateQuery = {
  orgId: 'org-a',
  subject: { skill: 'sk-d' },
  startS: NOW_S - 3600,
  endS: NOW_S + 60,
  workspaceIds: ['ws-a-team'],
  filters: [],
  groupBy: ['tool', 'mcp'],
  measures: ['tool_calls'],
};

/** `tool_calls` per (tool, server) group of sk-d's traces. */
async function callsByTool(store: TraceStore, filters: AggregateQuery['filters'] = []): Promise<string[]> {
  const rows = await store.aggregate({ ...byTool, filters });
  return rows
    .filter((r) => r.bucket === null && r.groups.tool !== null)
    .map((r) => `${String(r.groups.tool)} ${String(r.groups.mcp)} ${String(r.values.tool_calls)}`);
}

/** Calls of TOOL on SERVER (tool usage) and of SERVER (server usage), asked by `tool` and `server`. */
async function usage(store: TraceStore, tool = TOOL, server = SERVER): Promise<[number, number]> {
  const tools = await store.toolUsage({ ...scope, tools: [{ group: 0, tool, server }] });
  const servers = await store.serverUsage({ ...scope, servers: [server] });
  return [tools[0]?.calls ?? 0, servers[0]?.calls ?? 0];
}

type Engine = [string, () => { open(): Promise<TraceStore>; cleanup?(): Promise<void> }];
const engines: Engine[] = [1, 1000].map((values) => [
  `duckdb, ${values} dictionary value(s) in memory`,
  () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dim-lone-')), 'traces.duckdb');
    return { open: () => DuckDbTraceStore.open(file, { sealEveryMs: 0, dictionaryValues: values }) };
  },
]);
if (await postgresReachable())
  engines.push([
    'postgres',
    () => {
      const schema = freshSchemaName('t_dim_lone');
      return {
        open: () => openPostgresTraces({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema, { sealEveryMs: 0 }),
        cleanup: () => dropSchema(schema),
      };
    },
  ]);

for (const [engine, make] of engines) {
  describe(`dimension values differing only by lone surrogates: ${engine}`, () => {
    const opener = make();
    let store: TraceStore | undefined;
    afterAll(async () => {
      await store?.close();
      await opener.cleanup?.();
    });

    it('are one value: in one append, in a later one, and after a reopen', async () => {
      store = await opener.open();
      const first = calls(0, [
        ['lookup-\ud800', 'srv-\ud801'],
        ['lookup-\udc00', 'srv-\udc01'],
        ['lookup-\ud800', 'srv-\ufffd'],
      ]);
      expect((await store.insertSpans(first)).stored).toBe(4);
      expect(await callsByTool(store)).toEqual([`${TOOL} ${SERVER} 3`]);
      expect(await usage(store)).toEqual([3, 3]);

      expect((await store.insertSpans(calls(10, [['lookup-\udbff', 'srv-\udfff']]))).stored).toBe(2);
      expect(await usage(store)).toEqual([4, 4]);

      await store.close();
      store = await opener.open();
      expect((await store.insertSpans(calls(20, [[TOOL, 'srv-\ud802']]))).stored).toBe(2);
      expect(await callsByTool(store)).toEqual([`${TOOL} ${SERVER} 5`]);
      expect(await usage(store)).toEqual([5, 5]);
    });

    it('are counted in full when asked by a lone form, as a filter or as usage', async () => {
      if (store === undefined) throw new Error('the first test opens the store');
      expect(await usage(store, 'lookup-\udc00', 'srv-\ud800')).toEqual([5, 5]);
      expect(await callsByTool(store, [{ key: 'tool', op: 'eq', values: ['lookup-\ud800'] }])).toEqual([
        `${TOOL} ${SERVER} 5`,
      ]);
      expect(await callsByTool(store, [{ key: 'mcp', op: 'in', values: ['srv-\udc00', 'other'] }])).toEqual([
        `${TOOL} ${SERVER} 5`,
      ]);
    });
  });
}
