/**
 * What the PostgreSQL stores report for the `/metrics` gauge `gateway_stored_bytes`
 * (store/postgres/stored-bytes.ts): every table their migrations create is listed under exactly one
 * store (a table added later and left out fails here, by name), each is reported with its indexes
 * and partitions, and the trace tables grow as spans arrive.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresRegistry, openPostgresTraces } from '../../src/store/postgres/open.ts';
import { REGISTRY_TABLES, TRACE_TABLES } from '../../src/store/postgres/stored-bytes.ts';
import type { SpanRow } from '../../src/store/trace-port.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable, withPgClient } from '../contract/pg-schema.ts';
import { spanRow } from '../fixtures/span-row.ts';

const up = await postgresReachable();

function span(i: number, startS: number): SpanRow {
  return spanRow(0xb000 + i, {
    workspace_id: 'ws-a',
    start_s: startS,
    model: `model-${'m'.repeat(200)}-${i}`,
    session: `s-${i}`,
    tokens: 1,
  });
}

describe.skipIf(!up)('PostgreSQL stored bytes', () => {
  const schema = freshSchemaName('gw_bytes');
  afterAll(async () => {
    await dropSchema(schema);
  });

  it('lists every table of both stores once, with plausible sizes that grow with the spans stored', async () => {
    const config = { databaseUrl: PG_URL, requestTimeoutMs: 20_000 };
    const registry = await openPostgresRegistry(config, schema);
    const traces = await openPostgresTraces(config, schema, { sealEveryMs: 0 });
    try {
      const tables = await withPgClient(async (client) =>
        (
          await client.query<{ name: string }>(
            `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
            [schema],
          )
        ).rows.map((r) => r.name),
      );
      const listed: string[] = [...TRACE_TABLES, ...REGISTRY_TABLES];
      expect(new Set(listed).size).toBe(listed.length);
      expect(tables).toEqual([...listed].sort());

      const empty = await traces.storedBytes();
      expect(Object.keys(empty).sort()).toEqual([...TRACE_TABLES].sort());
      // Even an empty table has its indexes' first pages.
      for (const [table, bytes] of Object.entries(empty)) expect(bytes, table).toBeGreaterThan(0);
      const reg = await registry.storedBytes();
      expect(Object.keys(reg).sort()).toEqual([...REGISTRY_TABLES].sort());

      const now = Math.floor(Date.now() / 1000);
      await traces.insertSpans(Array.from({ length: 2000 }, (_, i) => span(i, now - 60)));
      const after = await traces.storedBytes();
      // 2,000 rows of some 300 bytes each, with their indexes: at least the values' bytes.
      expect((after.spans ?? 0) - (empty.spans ?? 0)).toBeGreaterThan(2000 * 200);
      const partitions = await withPgClient(
        async (client) =>
          (
            await client.query<{ n: string }>(
              `SELECT sum(pg_total_relation_size(relid))::bigint AS n FROM pg_partition_tree($1::regclass)`,
              [`${schema}.spans`],
            )
          ).rows,
      );
      expect(after.spans).toBe(Number(partitions[0]?.n));
    } finally {
      await traces.close();
      await registry.close();
    }
  });
});
