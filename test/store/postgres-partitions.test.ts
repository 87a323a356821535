/**
 * The monthly partitions of PostgreSQL's raw trace tables (partitions.ts, trace migration 005):
 * the months around now created ahead and every other row in the default partition, never moved
 * (a month whose rows are there already stays there); readers and writers during a month's
 * creation; retention drops whole months with the sealed rows and rollups that count them, and
 * counts their spans; busy locks make retention delete instead; two replicas start at once; and a
 * schema of the release before, sealed, migrated with its sealed layout kept. Statistics are
 * compared with the TypeScript reference throughout.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import type { PostgresTraceStore } from '../../src/store/postgres/trace-store.ts';
import { sealStep } from '../../src/store/postgres/sealing.ts';
import { monthStart } from '../../src/store/postgres/partitions.ts';
import type { AggregateQuery, MetricPointRow, SpanRow } from '../../src/store/trace-port.ts';
import { expectSameRows, reference } from '../contract/trace-reference.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';
import { QUERIES as FIXTURE_QUERIES, beforeLaterColumns, spans as fixtureSpans } from './sealing-fixture.ts';
import { SPAN_LATER_COLUMNS } from '../../src/store/stats/span-columns.ts';

/** "Now" is 1 November 2026 unless moved. */
const NOW = Date.UTC(2026, 10, 1) / 1000;
const month = (y: number, m: number) => Date.UTC(y, m - 1, 1) / 1000;
/** The sealing fixture's spans and queries 26 days earlier: from 26 September to 6 October 2026. */
const EARLIER = 26 * 86400;
const spans = (seed: number) => fixtureSpans(seed).map((r) => ({ ...r, start_s: r.start_s - EARLIER }));
const QUERIES = FIXTURE_QUERIES.map((q) => ({ ...q, startS: q.startS - EARLIER, endS: q.endS - EARLIER }));
/** The partitions (names) the times fall in. */
const monthsOf = (table: string, rows: SpanRow[]) =>
  [
    ...new Set(rows.map((r) => `${table}_p${new Date(r.start_s * 1000).toISOString().slice(0, 7).replace('-', '')}`)),
  ].sort();

const schemas: string[] = [];
async function open(schema: string, now = NOW): Promise<PostgresTraceStore> {
  if (!schemas.includes(schema)) schemas.push(schema);
  return openPostgresTraces({ databaseUrl: PG_URL, requestTimeoutMs: 20_000 }, schema, {
    sealEveryMs: 0,
    now: () => now,
  });
}

async function sql(schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path = ${schema}`);
  return client;
}

async function count(client: pg.Client, query: string): Promise<number> {
  return Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${query}`)).rows[0]?.n);
}

/** The partitions of `table` (their names), in order. */
async function partitions(client: pg.Client, table: string): Promise<string[]> {
  const res = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = $1::regclass ORDER BY 1`,
    [table],
  );
  return res.rows.map((r) => r.name);
}

const UNSEALED = 'spans WHERE xid >= (SELECT w FROM sealed)';

/**
 * Seals until no span lies above the watermark (another test file's transaction that began before
 * these rows holds the watermark back until it ends; each step is exact either way).
 */
async function sealEverything(store: PostgresTraceStore, client: pg.Client): Promise<void> {
  await expect
    .poll(
      async () => {
        await store.seal();
        return count(client, UNSEALED);
      },
      { timeout: 120_000, interval: 50 },
    )
    .toBe(0);
}

async function expectExact(store: PostgresTraceStore, stored: SpanRow[]): Promise<void> {
  for (const q of QUERIES) expectSameRows(await store.aggregate(q), reference(stored, q));
}

function point(time_s: number, n: number): MetricPointRow {
  return {
    org_id: 'org-1',
    key: `p${n}`,
    workspace_id: 'ws-1',
    session: `s${n}`,
    metric: 'lines_added',
    time_s,
    value: n,
  };
}

const reachable = await postgresReachable();
describe.runIf(reachable)('PostgreSQL monthly partitions', { timeout: 180_000 }, () => {
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  it('keeps the months around now in their partitions and every other time in the default partition', async () => {
    const schema = freshSchemaName('t_part');
    const store = await open(schema);
    const client = await sql(schema);
    try {
      const all = spans(1);
      // Long before the window (2 months back, 2 ahead), and a batch spread over a century: no
      // write creates a partition.
      const old = all.slice(0, 40).map((r) => ({ ...r, start_s: month(2020, 3) + 100 }));
      const spread = Array.from({ length: 1200 }, (_, i) => ({
        ...(all[0] as SpanRow),
        span_id: `spread${i}`,
        start_s: month(1970 + Math.floor(i / 12), (i % 12) + 1),
      }));
      const stored = [...all.slice(40), ...old, ...spread];
      for (let i = 0; i < stored.length; i += 1000) await store.insertSpans(stored.slice(i, i + 1000));
      expect(monthsOf('spans', all)).toEqual(['spans_p202609', 'spans_p202610']);
      const window = ['spans_p202609', 'spans_p202610', 'spans_p202611', 'spans_p202612', 'spans_p202701'];
      expect(await partitions(client, 'spans')).toEqual(['spans_default', ...window]);
      const inWindow = (t: number) => t >= month(2026, 9) && t < month(2027, 2);
      expect(await count(client, 'spans_default')).toBe(stored.filter((r) => !inWindow(r.start_s)).length);
      expect(await count(client, 'spans_p202609')).toBe(
        stored.filter((r) => r.start_s >= month(2026, 9) && r.start_s < month(2026, 10)).length,
      );
      expect(await store.countSpans()).toBe(stored.length);
      await expectExact(store, stored);
      await store.seal();
      await expectExact(store, stored);
      await store.insertMetricPoints([point(month(2026, 10) + 5, 1), point(month(2019, 1), 2)]);
      expect(await count(client, 'metric_points_p202610')).toBe(1);
      expect(await count(client, 'metric_points_default')).toBe(1);
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('a month whose rows are in the default partition already stays there; the months after it are created', async () => {
    const schema = freshSchemaName('t_part');
    const client = await sql(schema);
    // From late May into June 2027, written while those months are far ahead.
    const shift = month(2027, 6) + 5 * 86400 - NOW + EARLIER;
    const later = spans(2).map((r) => ({ ...r, start_s: r.start_s + shift }));
    try {
      const first = await open(schema);
      try {
        for (let i = 0; i < later.length; i += 1000) await first.insertSpans(later.slice(i, i + 1000));
        await sealEverything(first, client);
      } finally {
        await first.close();
      }
      expect(await count(client, 'spans_default')).toBe(later.length);
      // Months later, June 2027 is inside the window: its rows (and May's) are not moved.
      const store = await open(schema, month(2027, 6) + 3600);
      try {
        const made = await partitions(client, 'spans');
        expect(made).toEqual(expect.arrayContaining(['spans_p202707', 'spans_p202708']));
        expect(made).not.toContain('spans_p202705');
        expect(made).not.toContain('spans_p202706');
        expect(await count(client, 'spans_default')).toBe(later.length);
        expect(await count(client, UNSEALED)).toBe(0);
        const shifted = QUERIES.map((q) => ({ ...q, startS: q.startS + shift, endS: q.endS + shift }));
        for (const q of shifted) expectSameRows(await store.aggregate(q), reference(later, q));
      } finally {
        await store.close();
      }
    } finally {
      await client.end();
    }
  });

  it('a guard left by an interrupted creation is finished, or dropped when the month has rows in the default partition', async () => {
    const schema = freshSchemaName('t_part');
    const client = await sql(schema);
    try {
      await (await open(schema)).close();
      // Guards of February and March 2027 (past the window of 1 November 2026), as a creator that
      // stopped after its first step leaves them; March has rows in the default partition.
      const march = spans(11).map((r) => ({ ...r, start_s: month(2027, 3) + 100 }));
      const first = await open(schema);
      await first.insertSpans(march);
      await first.close();
      for (const m of [month(2027, 2), month(2027, 3)])
        await client.query(
          `ALTER TABLE spans_default ADD CONSTRAINT spans_p${new Date(m * 1000).toISOString().slice(0, 7).replace('-', '')}_guard
          CHECK (start_s < ${m} OR start_s >= ${m + 28 * 86400}) NOT VALID`,
        );
      const guards = "pg_constraint WHERE conrelid = 'spans_default'::regclass AND conname LIKE '%guard'";
      expect(await count(client, guards)).toBe(2);
      // In January, February and March are among the months ahead.
      const store = await open(schema, month(2027, 1) + 3600);
      try {
        expect(await partitions(client, 'spans')).toContain('spans_p202702');
        expect(await partitions(client, 'spans')).not.toContain('spans_p202703');
        expect(await count(client, guards)).toBe(0);
        // March's rows are still written to the default partition.
        await store.insertSpans(march.map((r) => ({ ...r, span_id: `${r.span_id}x` })));
        expect(await count(client, 'spans_default')).toBe(2 * march.length);
      } finally {
        await store.close();
      }
    } finally {
      await client.end();
    }
  });

  it('readers and writers during the creation of a month wait for it and see every row', async () => {
    const schema = freshSchemaName('t_part');
    const store = await open(schema);
    const client = await sql(schema);
    const creator = await sql(schema);
    try {
      const all = spans(8);
      const old = all.slice(0, 50).map((r) => ({ ...r, start_s: month(2020, 3) + 100 }));
      const stored = [...all.slice(50), ...old];
      await store.insertSpans(stored);
      // February 2027 is past the window: created here by hand, held uncommitted (its ATTACH locks
      // the default partition) while the store counts, aggregates and writes.
      await creator.query('BEGIN');
      expect(
        (await creator.query('SELECT trace_month_partition($1, $2, $3) AS o', ['spans', 'start_s', month(2027, 2)]))
          .rows[0],
      ).toEqual({ o: 'created' });
      // Rows of the month being created: routed to the default partition before the wait, they fail
      // its new constraint once the creator commits, and the store writes them again.
      const more = spans(9).map((r) => ({ ...r, span_id: `${r.span_id}m`, start_s: month(2027, 2) + 600 }));
      const pending = Promise.all([
        store.countSpans(),
        store.aggregate(QUERIES[0] as AggregateQuery),
        store.insertSpans(more),
      ]);
      // All three wait for the creator's locks (another test file's waits may count too: then this
      // commits sooner, and the answers must be the same).
      await expect
        .poll(() => count(client, "pg_stat_activity WHERE wait_event_type = 'Lock'"), { timeout: 60_000, interval: 20 })
        .toBeGreaterThanOrEqual(3);
      await creator.query('COMMIT');
      const [counted, rows] = await pending;
      expect(counted).toBe(stored.length);
      expectSameRows(rows, reference(stored, QUERIES[0] as AggregateQuery));
      expect(await store.countSpans()).toBe(stored.length + more.length);
      expect(await count(client, 'spans_default')).toBe(old.length);
      expect(await count(client, 'spans_p202702')).toBe(more.length);
    } finally {
      await creator.end();
      await client.end();
      await store.close();
    }
  });

  it('retention drops the months that end by the cutoff whole, with their sealed rows and rollups, and counts every span', async () => {
    const schema = freshSchemaName('t_part');
    const store = await open(schema);
    const client = await sql(schema);
    try {
      const all = spans(3);
      const old = all.slice(0, 25).map((r) => ({ ...r, start_s: month(2020, 3) + 100 }));
      const stored = [...all.slice(25), ...old];
      for (let i = 0; i < stored.length; i += 1000) await store.insertSpans(stored.slice(i, i + 1000));
      await store.insertMetricPoints([point(month(2026, 9) + 5, 1), point(month(2026, 10) + 4 * 86400, 2)]);
      await sealEverything(store, client);
      const cutoff = month(2026, 10) + 3 * 86400 + 17;
      const pruned = await store.pruneBefore(cutoff);
      expect(pruned).toBe(stored.filter((r) => r.start_s < cutoff).length);
      expect(await partitions(client, 'spans')).not.toContain('spans_p202609');
      expect(await partitions(client, 'metric_points')).not.toContain('metric_points_p202609');
      expect(await count(client, 'metric_points')).toBe(1);
      expect(await count(client, 'spans_default')).toBe(0);
      expect(await count(client, 'spans_p202610')).toBe(stored.filter((r) => r.start_s >= cutoff).length);
      // The sealed layout keeps nothing before the cutoff, and its rollups are the sums of what it keeps.
      expect(await count(client, 'skill_spans WHERE start_s < ' + String(cutoff))).toBe(0);
      expect(await count(client, 'skill_spans')).toBeGreaterThan(0);
      const sums = await client.query<{ rolled: string; rows: string }>(
        'SELECT (SELECT sum(spans) FROM skill_rollup) AS rolled, (SELECT count(*) FROM skill_spans) AS rows',
      );
      expect(sums.rows[0]?.rolled).toBe(sums.rows[0]?.rows);
      // A trace keeps its mappings while it has spans, and only then.
      expect(await count(client, 'trace_skills')).toBeGreaterThan(0);
      expect(
        await count(client, 'trace_skills t WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = t.trace_id)'),
      ).toBe(0);
      // As the retention contract: answers from the cutoff on are what they were before pruning,
      // and a range before it sees nothing.
      for (const q of QUERIES) {
        const from = { ...q, startS: Math.max(q.startS, cutoff) };
        expectSameRows(await store.aggregate(from), reference(stored, from));
        const before = { ...q, startS: month(2026, 9), endS: cutoff };
        expectSameRows(await store.aggregate(before), reference([], before));
      }
      expect(await store.pruneBefore(cutoff)).toBe(0);
      // A replica starting later does not create the dropped month again.
      await (await open(schema)).close();
      expect(await partitions(client, 'spans')).not.toContain('spans_p202609');
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('a statistics query waiting for a month being dropped reads the state after the drop, never a mix', async () => {
    const schema = freshSchemaName('t_part');
    const store = await open(schema);
    const client = await sql(schema);
    const holder = await sql(schema);
    try {
      // Unsealed: the statistics read spans. October's rows deleted and September dropped in one
      // transaction, held while a query starts.
      await store.insertSpans(spans(10));
      await holder.query('BEGIN; DELETE FROM spans_p202610; DROP TABLE spans_p202609');
      const q = QUERIES[0] as AggregateQuery;
      const pending = store.aggregate(q);
      await expect
        .poll(() => count(client, "pg_stat_activity WHERE wait_event_type = 'Lock'"), { timeout: 60_000, interval: 20 })
        .toBeGreaterThanOrEqual(1);
      await holder.query('COMMIT');
      expectSameRows(await pending, reference([], q));
      expectSameRows(await store.aggregate(q), reference([], q));
    } finally {
      await holder.end();
      await client.end();
      await store.close();
    }
  });

  it('a month whose drop cannot get its lock has its rows deleted instead, and is dropped by a later run', async () => {
    const schema = freshSchemaName('t_part');
    const store = await open(schema);
    const client = await sql(schema);
    const reader = await sql(schema);
    try {
      const all = spans(4);
      await store.insertSpans(all);
      // A long reader of spans: dropping a month waits for it, then gives up.
      await reader.query('BEGIN; SELECT count(*) FROM spans');
      const cutoff = month(2026, 10);
      const pruned = await store.pruneBefore(cutoff);
      await reader.query('COMMIT');
      expect(pruned).toBe(all.filter((r) => r.start_s < cutoff).length);
      expect(pruned).toBeGreaterThan(0);
      expect(await partitions(client, 'spans')).toContain('spans_p202609');
      expect(await count(client, 'spans_p202609')).toBe(0);
      expect(await store.countSpans()).toBe(all.filter((r) => r.start_s >= cutoff).length);
      expect(await store.pruneBefore(cutoff)).toBe(0);
      expect(await partitions(client, 'spans')).not.toContain('spans_p202609');
    } finally {
      await reader.end();
      await client.end();
      await store.close();
    }
  });

  it('two replicas starting at once create each month once and both write', async () => {
    const schema = freshSchemaName('t_part');
    const [a, b] = await Promise.all([open(schema), open(schema)]);
    const client = await sql(schema);
    try {
      const all = spans(5);
      const half = Math.floor(all.length / 2);
      await Promise.all([a.insertSpans(all.slice(0, half)), b.insertSpans(all.slice(half))]);
      expect(await partitions(client, 'spans')).toEqual([
        'spans_default',
        'spans_p202609',
        'spans_p202610',
        'spans_p202611',
        'spans_p202612',
        'spans_p202701',
      ]);
      expect(await count(client, 'spans_default')).toBe(0);
      expect(await a.countSpans()).toBe(all.length);
    } finally {
      await client.end();
      await a.close();
      await b.close();
    }
  });

  it('migrates a sealed schema of the release before: rows and their xids kept, nothing to seal again', async () => {
    const schema = freshSchemaName('t_part');
    schemas.push(schema);
    const client = await sql(schema);
    try {
      const dir = path.join(import.meta.dirname, '../../src/store/postgres/migrations/traces');
      await client.query(
        'CREATE TABLE traces_schema_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
      for (const name of [
        '001_init.sql',
        '002_metric_points.sql',
        '003_sealed_skill_spans.sql',
        '004_skill_rollups.sql',
      ]) {
        await client.query(readFileSync(path.join(dir, name), 'utf8'));
        await client.query('INSERT INTO traces_schema_migrations (name) VALUES ($1)', [name]);
      }
      const all = beforeLaterColumns(spans(6));
      const old = all.slice(0, 30).map((r) => ({ ...r, start_s: month(2019, 2) + 7 }));
      const stored = [...all.slice(30), ...old];
      // Rows as that release stored them: without the columns added since (their defaults hold for these spans).
      const rows = stored.map(({ user, session, mcp_request: _request, mcp_side: _side, ...r }) => ({
        ...Object.fromEntries(
          Object.entries(r).filter(([k]) => !(SPAN_LATER_COLUMNS as readonly string[]).includes(k)),
        ),
        user_id: user,
        session_id: session,
        tokens: Math.round(r.tokens),
      }));
      const columns = Object.keys(rows[0] as object).join(', ');
      await client.query(
        `INSERT INTO spans (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::spans, $1)`,
        [JSON.stringify(rows)],
      );
      await client.query(`INSERT INTO trace_skills (org_id, skill, skill_version, trace_id, start_s)
        SELECT DISTINCT org_id, skill, skill_version, trace_id, start_s FROM spans WHERE category = 'skill_invocation'`);
      // This release's sealing writes the columns added since: there while it seals, then gone again.
      const later = readFileSync(path.join(dir, '007_provider_agent_cache.sql'), 'utf8');
      await client.query(later);
      await expect
        .poll(
          async () => {
            await sealStep(client, 1_000_000);
            return count(client, UNSEALED);
          },
          { timeout: 120_000, interval: 50 },
        )
        .toBe(0);
      for (const table of ['spans', 'skill_spans'])
        await client.query(`ALTER TABLE ${table} ${SPAN_LATER_COLUMNS.map((c) => `DROP COLUMN ${c}`).join(', ')}`);
      const before = (
        await client.query('SELECT (SELECT w FROM sealed)::text AS w, (SELECT count(*) FROM skill_spans) AS n')
      ).rows[0];
      const xids = await count(client, 'spans WHERE xid < (SELECT w FROM sealed)');
      const store = await open(schema);
      try {
        expect(await partitions(client, 'spans')).toEqual(
          expect.arrayContaining(['spans_default', 'spans_p202611', ...monthsOf('spans', stored.slice(0, -30))]),
        );
        // The migration's window is around the time it runs: 24 months back to 2 ahead.
        const now = Date.now() / 1000;
        const outside = stored.filter((r) => r.start_s < monthStart(now, -24) || r.start_s >= monthStart(now, 3));
        expect(outside.length).toBeGreaterThanOrEqual(30);
        expect(await count(client, 'spans_default')).toBe(outside.length);
        expect(
          (await client.query('SELECT (SELECT w FROM sealed)::text AS w, (SELECT count(*) FROM skill_spans) AS n'))
            .rows[0],
        ).toEqual(before);
        expect(await count(client, 'spans WHERE xid < (SELECT w FROM sealed)')).toBe(xids);
        expect(xids).toBe(stored.length);
        await expectExact(store, stored);
      } finally {
        await store.close();
      }
    } finally {
      await client.end();
    }
  });
});
