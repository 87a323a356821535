/**
 * Agent names as sent (TraceStore.admitAgentNames, store/agent-names.ts) that differ only by lone
 * UTF-16 surrogates: every engine stores them as U+FFFD, so they are one name, compared in that
 * form both in memory and against the stored names. Two such names in one request are one admission
 * (DuckDB: not two rows for its key, which failed the request), and after a reopen a name the table
 * holds is admitted again at the cap (PostgreSQL refused it). On DuckDB (on a file, and in its
 * worker thread) and PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentNameUse } from '../../src/store/agent-names.ts';
import { ThreadedTraceStore } from '../../src/store/duckdb/threaded-store.ts';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import type { TraceStore } from '../../src/store/trace-port.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';

const DAY = 20_600;
const use = (name: string, workspaceId = 'ws-1'): AgentNameUse => ({ workspaceId, day: DAY, name });

/** Opens an engine's store, and the same stored names through a store that admitted none of them. */
type Engine = [string, () => Promise<{ open(): Promise<TraceStore>; cleanup?(): Promise<void> }>];

const duckdb =
  (threaded: boolean): Engine[1] =>
  () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-names-lone-')), 'traces.duckdb');
    return Promise.resolve({
      open: () =>
        threaded ? ThreadedTraceStore.open(file, { sealEveryMs: 0 }) : DuckDbTraceStore.open(file, { sealEveryMs: 0 }),
    });
  };

const engines: Engine[] = [
  ['duckdb', duckdb(false)],
  ['duckdb in a worker thread', duckdb(true)],
];
if (await postgresReachable())
  engines.push([
    'postgres',
    () => {
      const schema = freshSchemaName('t_names_lone');
      return Promise.resolve({
        open: () => openPostgresTraces({ databaseUrl: PG_URL, requestTimeoutMs: 10_000 }, schema, { sealEveryMs: 0 }),
        cleanup: () => dropSchema(schema),
      });
    },
  ]);

for (const [engine, make] of engines) {
  describe(`agent names differing only by lone surrogates: ${engine}`, () => {
    let store: TraceStore;
    let opener: Awaited<ReturnType<Engine[1]>>;
    beforeAll(async () => {
      opener = await make();
      store = await opener.open();
    });
    afterAll(async () => {
      await store.close();
      await opener.cleanup?.();
    });
    const admit = (uses: AgentNameUse[], cap: number) => store.admitAgentNames({ orgId: 'org-1', cap, uses });

    it('admits them as one name, held once', async () => {
      expect(await admit([use('a\ud800'), use('a\udc00'), use('a\ufffd'), use('a\udbff')], 3)).toEqual([
        true,
        true,
        true,
        true,
      ]);
      // One name held of 2: one more is admitted, then none.
      expect(await admit([use('b'), use('c'), use('a\udfff')], 2)).toEqual([true, false, true]);
    });

    it('after a reopen, admits a name the table holds at the cap, in any of its forms', async () => {
      await store.close();
      store = await opener.open();
      expect(await admit([use('a\udc01'), use('b'), use('c'), use('a\ufffd')], 2)).toEqual([true, true, false, true]);
      // A name of another workspace is its own.
      expect(await admit([use('a\ud800', 'ws-2'), use('a\udc00', 'ws-2'), use('d', 'ws-2')], 1)).toEqual([
        true,
        true,
        false,
      ]);
    });
  });
}
