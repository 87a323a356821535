/**
 * Exactly once on PostgreSQL beyond one store (span-writes.ts, trace migration 006): two replicas
 * given the same batches at the same moment store each span once, sealed or not; and a schema from
 * before identities, whose resent spans were stored and sealed twice, keeps one copy of each after
 * the migration, with statistics that count it once before the next sealing step and after it.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import type { PostgresTraceStore } from '../../src/store/postgres/trace-store.ts';
import type { AggregateQuery, SpanRow } from '../../src/store/trace-port.ts';
import { END, generated, skillQuery } from '../contract/trace-contract.ts';
import { expectSameRows, reference } from '../contract/trace-reference.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';

const schemas: string[] = [];
async function open(schema: string): Promise<PostgresTraceStore> {
  if (!schemas.includes(schema)) schemas.push(schema);
  return openPostgresTraces({ databaseUrl: PG_URL, requestTimeoutMs: 20_000 }, schema, {
    sealEveryMs: 0,
    now: () => END,
  });
}

async function sql<T>(schema: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`SET search_path = ${schema}`);
    return await work(client);
  } finally {
    await client.end();
  }
}

const spans = generated()
  .filter((s) => s.org_id === 'org-1')
  .slice(0, 2400);
const queries = [
  skillQuery({ startS: END - 40 * 86400 }),
  skillQuery({
    startS: END - 40 * 86400,
    groupBy: ['model'],
    bucket: 'day',
    measures: ['traces', 'spans', 'tokens', 'skill_invocations', 'latency_p99'],
  }),
];
const exact = async (store: PostgresTraceStore, stored: SpanRow[]) => {
  expect(await store.countSpans()).toBe(stored.length);
  for (const q of queries) expectSameRows(await store.aggregate(q), reference(stored, q));
};

const reachable = await postgresReachable();
describe.runIf(reachable)('PostgreSQL identities', { timeout: 180_000 }, () => {
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  it('two replicas given the same batches at the same moment store each span once', async () => {
    const schema = freshSchemaName('t_ident');
    const [a, b] = [await open(schema), await open(schema)];
    const batches = Array.from({ length: 12 }, (_, i) => spans.slice(i * 200, (i + 1) * 200));
    let stored = 0;
    for (const [i, batch] of batches.entries()) {
      // The same rows to both at once; the second batch of each pair reversed (another row order).
      const outcomes = await Promise.all([
        a.insertSpans(batch),
        b.insertSpans(i % 2 === 0 ? batch : [...batch].reverse()),
      ]);
      stored += outcomes[0].stored + outcomes[1].stored;
      expect(outcomes[0].stored + outcomes[1].stored).toBe(batch.length);
      expect(outcomes[0].duplicates + outcomes[1].duplicates).toBe(batch.length);
      if (i === 5) expect(await a.seal()).toBe(true);
    }
    expect(stored).toBe(spans.length);
    await exact(a, spans);
    expect(await b.seal()).toBe(true);
    await exact(b, spans);
    await a.close();
    await b.close();
  });

  it('a schema from before identities keeps one copy of each span stored twice, counted once', async () => {
    const schema = freshSchemaName('t_ident');
    const store = await open(schema);
    await store.insertSpans(spans);
    expect(await store.seal()).toBe(true);
    // As a release before identities did: no unique index, and resent spans stored and sealed again.
    await sql(schema, async (c) => {
      await c.query('DROP INDEX spans_identity; CREATE INDEX spans_trace ON spans (trace_id)');
      await c.query('ALTER TABLE metric_points DROP COLUMN point_key');
      await c.query(`DELETE FROM traces_schema_migrations WHERE name = '006_identities.sql'`);
      await c.query(`INSERT INTO spans SELECT org_id, workspace_id, trace_id, span_id, parent_span_id, name, start_s,
        duration_ms, category, harness, skill, skill_version, command, mcp, tool, model, user_id, session_id, tokens, cost,
        is_error FROM spans WHERE span_id < '4'`);
      await c.query(`INSERT INTO trace_skills (org_id, skill, skill_version, trace_id, start_s)
        SELECT org_id, skill, skill_version, trace_id, start_s FROM trace_skills WHERE trace_id < '4'`);
    });
    expect(await store.seal()).toBe(true);
    const doubled = await store.countSpans();
    expect(doubled).toBeGreaterThan(spans.length + 100);
    // The double count is real before the migration: the first query does not match the reference.
    const before = await store.aggregate(queries[0] as AggregateQuery);
    expect(before[0]?.values.spans).toBeGreaterThan(
      reference(spans, queries[0] as AggregateQuery)[0]?.values.spans ?? 0,
    );
    await store.close();

    const upgraded = await open(schema);
    await exact(upgraded, spans);
    expect(await upgraded.insertSpans(spans.slice(0, 300))).toEqual({ stored: 0, duplicates: 300 });
    expect(await upgraded.seal()).toBe(true);
    await exact(upgraded, spans);
    await upgraded.close();
  });
});
