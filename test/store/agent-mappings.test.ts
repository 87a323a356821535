/**
 * The trace -> agent mappings (DuckDB migration 006, PostgreSQL traces migration 008) of spans
 * stored before them: the migration maps every stored trace to the agents its spans name, so an
 * agent's statistics count the spans stored before the upgrade as those stored after it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import { MEASURES, type AggregateQuery, type SpanRow, type TraceStore } from '../../src/store/trace-port.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';
import { END, generated } from '../contract/trace-contract.ts';
import { expectSameRows, reference } from '../contract/trace-reference.ts';

const spans = generated().slice(0, 2000);
const later = generated().slice(2000, 2600);
const queries: AggregateQuery[] = ['agent-0001', 'planner'].flatMap((agent) => [
  {
    orgId: 'org-1',
    subject: { agent },
    startS: END - 40 * 86400,
    endS: END,
    workspaceIds: ['ws-1', 'ws-2'],
    filters: [],
    groupBy: [],
    measures: [...MEASURES],
  },
  {
    orgId: 'org-1',
    subject: { agent },
    startS: END - 40 * 86400,
    endS: END,
    workspaceIds: ['ws-1', 'ws-2'],
    filters: [],
    groupBy: ['model'],
    bucket: 'day',
    measures: ['traces', 'spans', 'tokens'],
  },
]);

async function expectExact(store: TraceStore, stored: SpanRow[]): Promise<void> {
  for (const q of queries) expectSameRows(await store.aggregate(q), reference(stored, q));
}

/**
 * Stores `spans`, takes the mappings away as a release before them had none, upgrades, and checks
 * the agents' statistics before and after more spans arrive.
 */
async function upgradeCase(
  open: () => Promise<TraceStore>,
  run: (store: TraceStore, statements: string[]) => Promise<void>,
  migration: string,
): Promise<void> {
  const store = await open();
  await store.insertSpans(spans);
  await run(store, ['DELETE FROM trace_agents']);
  const [before] = await store.aggregate(queries[0] as AggregateQuery);
  expect(before?.values.spans, 'nothing is mapped').toBe(0);
  await run(store, ['DROP TABLE trace_agents', `DELETE FROM ${migration}`]);
  await store.close();
  const upgraded = await open();
  const [after] = await upgraded.aggregate(queries[0] as AggregateQuery);
  expect(after?.values.spans).toBeGreaterThan(500);
  await expectExact(upgraded, spans);
  await upgraded.insertSpans(later);
  await expectExact(upgraded, [...spans, ...later]);
  await upgraded.close();
}

const reachable = await postgresReachable();
describe('trace -> agent mappings of spans stored before them', () => {
  it('duckdb: migration 006 maps the stored traces', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-agent-mappings-'));
    const file = path.join(dir, 'traces.duckdb');
    try {
      await upgradeCase(
        () => DuckDbTraceStore.open(file, { sealEveryMs: 0 }),
        async (store, statements) => {
          const conn = await (store as DuckDbTraceStore).connect();
          for (const statement of statements) await conn.run(statement);
          conn.closeSync();
        },
        `schema_migrations WHERE name = '006_trace_agents'`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  const schema = freshSchemaName('t_agents');
  afterAll(async () => {
    if (reachable) await dropSchema(schema);
  });
  it.runIf(reachable)('postgres: traces migration 008 maps the stored traces', async () => {
    await upgradeCase(
      () =>
        openPostgresTraces({ databaseUrl: PG_URL, requestTimeoutMs: 20_000 }, schema, {
          sealEveryMs: 0,
          now: () => END,
        }),
      async (_store, statements) => {
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        try {
          await client.query(`SET search_path = ${schema}`);
          for (const statement of statements) await client.query(statement);
        } finally {
          await client.end();
        }
      },
      `traces_schema_migrations WHERE name = '008_trace_agents.sql'`,
    );
  });
});
