/**
 * PostgreSQL sealing keeps statistics exact whatever order spans arrive in and whoever seals:
 * children before their skill invocation, a second skill or version named after a trace's spans
 * were sealed, seals at any point; a transaction still writing when a step starts (its rows are
 * below no watermark until it ends); two replicas writing and sealing at once; and a schema from
 * before the sealed layout, migrated. Every answer is compared with the TypeScript reference.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresTraces } from '../../src/store/postgres/open.ts';
import type { PostgresTraceStore } from '../../src/store/postgres/trace-store.ts';
import { sealStep } from '../../src/store/postgres/sealing.ts';
import type { AggregateQuery, SpanRow } from '../../src/store/trace-port.ts';
import { prng } from '../../src/shared/prng.ts';
import { expectSameRows, reference } from '../contract/trace-reference.ts';
import { PG_URL, dropSchema, freshSchemaName, postgresReachable } from '../contract/pg-schema.ts';
import {
  ORG,
  QUERIES,
  beforeLaterColumns,
  shuffle,
  spans,
  expectExactInAnyOrder,
  expectLateSkillCountedOnce,
} from './sealing-fixture.ts';

const schemas: string[] = [];
async function open(schema = freshSchemaName('t_seal')): Promise<PostgresTraceStore> {
  if (!schemas.includes(schema)) schemas.push(schema);
  return openPostgresTraces({ databaseUrl: PG_URL, requestTimeoutMs: 20_000 }, schema, { sealEveryMs: 0 });
}

async function expectExact(store: PostgresTraceStore, stored: SpanRow[]): Promise<void> {
  for (const q of QUERIES) expectSameRows(await store.aggregate(q), reference(stored, q));
}

/** A client on `schema` for what the store does not offer (a transaction held open, the sealed mark). */
async function sql(schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`SET search_path = ${schema}`);
  return client;
}

const INSERT_SPAN = `INSERT INTO spans (org_id, workspace_id, trace_id, span_id, parent_span_id, name, start_s, duration_ms,
  category, harness, skill, skill_version, command, mcp, tool, model, user_id, session_id, tokens, cost, is_error)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`;
const spanParams = (r: SpanRow) => [
  r.org_id,
  r.workspace_id,
  r.trace_id,
  r.span_id,
  r.parent_span_id,
  r.name,
  r.start_s,
  r.duration_ms,
  r.category,
  r.harness,
  r.skill,
  r.skill_version,
  r.command,
  r.mcp,
  r.tool,
  r.model,
  r.user,
  r.session,
  r.tokens,
  r.cost,
  r.is_error,
];

/**
 * Seals until no span lies above the watermark. Transaction ids are the whole server's: while
 * another test file's transaction that began before our rows is still running, a step cannot seal
 * past it, so this polls (each step is exact either way; only the layout waits).
 */
async function sealEverything(store: PostgresTraceStore, client: pg.Client): Promise<void> {
  await expect
    .poll(
      async () => {
        await store.seal();
        const left = await client.query<{ n: string }>(
          'SELECT count(*) AS n FROM spans WHERE xid >= (SELECT w FROM sealed)',
        );
        return Number(left.rows[0]?.n);
      },
      { timeout: 120_000, interval: 50 },
    )
    .toBe(0);
}

/**
 * The rollups' invariants (rollups.ts), written here independently of their SQL: skill_rollup holds
 * exactly the sums of skill_spans per (skill, day, workspace, dimension values); a pair that is not
 * special lies on one day in one workspace and marks one span per pair (bit 1) and per model (bit
 * 128) and tool (bit 64) value; every pair on several days or workspaces is special, and a special
 * pair's time range holds all its spans.
 */
async function expectRollupsConsistent(client: pg.Client): Promise<void> {
  const key = `org_id, of_skill, (start_s / 86400) * 86400, workspace_id, harness, skill, skill_version, command, mcp, tool, model, user_id`;
  const sums = `count(*), count(*) FILTER (WHERE is_invocation), count(*) FILTER (WHERE is_invocation AND is_error),
    count(*) FILTER (WHERE is_tool_call), COALESCE(sum(tokens), 0), count(*) FILTER (WHERE firsts & 1 <> 0),
    count(*) FILTER (WHERE firsts & 64 <> 0), count(*) FILTER (WHERE firsts & 128 <> 0)`;
  const stored = `SELECT org_id, of_skill, day_s, workspace_id, harness, skill, skill_version, command, mcp, tool, model,
    user_id, spans, inv, err, tool_calls, tokens, f_trace, f_tool, f_model FROM skill_rollup`;
  const computed = `SELECT ${key}, ${sums} FROM skill_spans GROUP BY ${key}`;
  const differ = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM ((${stored} EXCEPT ${computed}) UNION ALL (${computed} EXCEPT ${stored})) d`,
  );
  expect(Number(differ.rows[0]?.n)).toBe(0);
  const rollups = await client.query<{ n: string }>('SELECT count(*) AS n FROM skill_rollup');
  expect(Number(rollups.rows[0]?.n)).toBeGreaterThan(0);
  const badPairs = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM (SELECT org_id, of_skill, trace_key FROM skill_spans k
      WHERE NOT EXISTS (SELECT 1 FROM skill_special p WHERE p.org_id = k.org_id AND p.of_skill = k.of_skill AND p.trace_key = k.trace_key)
      GROUP BY org_id, of_skill, trace_key
      HAVING count(DISTINCT start_s / 86400) > 1 OR count(DISTINCT workspace_id) > 1
        OR count(*) FILTER (WHERE firsts & 1 <> 0) <> 1
        OR count(*) FILTER (WHERE firsts & 128 <> 0) <> count(DISTINCT COALESCE(model, '-'))
        OR count(*) FILTER (WHERE firsts & 64 <> 0) <> count(DISTINCT COALESCE(tool, '-'))) bad`,
  );
  expect(Number(badPairs.rows[0]?.n)).toBe(0);
  const outside = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM skill_spans k JOIN skill_special p
      ON p.org_id = k.org_id AND p.of_skill = k.of_skill AND p.trace_key = k.trace_key
      WHERE k.start_s < p.first_s OR k.start_s > p.last_s`,
  );
  expect(Number(outside.rows[0]?.n)).toBe(0);
}

const reachable = await postgresReachable();
// Sealing steps are real PostgreSQL work: on a busy 2-core machine a test may take a minute, which is no failure.
describe.runIf(reachable)('PostgreSQL sealing', { timeout: 180_000 }, () => {
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  it.each([1, 2])('answers exactly for spans in any order with seals anywhere (seed %i)', async (seed) => {
    const store = await open();
    try {
      await expectExactInAnyOrder(store, seed, {
        checkChance: 0.3,
        seal: async () => expect(await store.seal()).toBe(true),
      });
    } finally {
      await store.close();
    }
  });

  it('keeps the rollups equal to the sealed rows through rewrites and retention, and sums them exactly', async () => {
    const schema = freshSchemaName('t_seal');
    const store = await open(schema);
    const client = await sql(schema);
    try {
      const rnd = prng(11);
      // Spans in random order: pairs gain spans and mappings after some of theirs were sealed. The
      // children start up to two hours after their invocation: retention cuts pairs inside a day.
      const later = (r: SpanRow) =>
        r.category === 'skill_invocation'
          ? r
          : { ...r, start_s: r.start_s + (parseInt(r.span_id.slice(0, 4), 16) % 7200) };
      const all = shuffle(spans(11).map(later), rnd);
      for (let i = 0; i < all.length;) {
        const batch = all.slice(i, i + 1 + Math.floor(rnd() * 300));
        i += batch.length;
        await store.insertSpans(batch);
        // Sealed up to here (whatever other transactions of the server hold back), so that later
        // spans and mappings rewrite pairs.
        if (rnd() < 0.5) await sealEverything(store, client);
      }
      await sealEverything(store, client);
      await expectRollupsConsistent(client);
      const rewritten = await client.query<{ n: string }>('SELECT count(*) AS n FROM skill_special');
      expect(Number(rewritten.rows[0]?.n)).toBeGreaterThan(0);
      await expectExact(store, all);
      // A cutoff inside a day cuts pairs: what is left of them is special, the sums lose the rest.
      const cutoff = Math.min(...all.map((r) => r.start_s)) + 4 * 86400 + 7 * 3600;
      expect(await store.pruneBefore(cutoff)).toBeGreaterThan(0);
      await expectRollupsConsistent(client);
      // A range reaching before the cutoff sees what a range from it sees (a mapping stays while its spans do).
      for (const q of QUERIES) {
        const across = { ...q, startS: cutoff - 86400 };
        expectSameRows(await store.aggregate(across), reference(all, { ...q, startS: cutoff }));
      }
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('refuses writes to skill_spans from a writer that does not keep the rollups (an older release), and seals and prunes itself', async () => {
    const schema = freshSchemaName('t_seal');
    const store = await open(schema);
    const client = await sql(schema);
    try {
      const all = spans(12);
      await store.insertSpans(all);
      await sealEverything(store, client);
      for (const statement of [
        'DELETE FROM skill_spans WHERE start_s < 0',
        'INSERT INTO skill_spans SELECT * FROM skill_spans WHERE false',
        'UPDATE skill_spans SET tokens = tokens WHERE false',
        'TRUNCATE skill_spans',
      ])
        await expect(client.query(statement), statement).rejects.toThrow(/only by gateways that keep its rollups/);
      await expectRollupsConsistent(client);
      expect(await store.pruneBefore(Math.min(...all.map((r) => r.start_s)) + 86400)).toBeGreaterThan(0);
      await expectRollupsConsistent(client);
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('seals spans whose every stored value has the longest length ingestion allows (256 bytes), and a pair too large to mark', async () => {
    const schema = freshSchemaName('t_seal');
    const store = await open(schema);
    const client = await sql(schema);
    try {
      const rnd = prng(13);
      // Values that do not compress: 256 random hex digits each.
      const long = () =>
        Array.from({ length: 32 }, () =>
          Math.floor(rnd() * 2 ** 32)
            .toString(16)
            .padStart(8, '0'),
        ).join('');
      const skill = long();
      const base = spans(13).find((r) => r.category === 'skill_invocation') as SpanRow;
      const wide = (r: SpanRow): SpanRow => ({
        ...r,
        workspace_id: 'ws-1',
        harness: long(),
        command: long(),
        mcp: long(),
        tool: long(),
        model: long(),
        user: long(),
        session: long(),
      });
      const invocation = wide({ ...base, skill });
      const children = [1, 2, 3].map((i) =>
        wide({
          ...base,
          span_id: `${base.span_id.slice(0, 13)}00${i}`,
          category: 'model_call',
          skill: null,
          skill_version: null,
        }),
      );
      // A trace of more spans than a marked pair may have, arriving in two parts.
      const big = Array.from({ length: 1500 }, (_, i): SpanRow => ({
        ...base,
        trace_id: 'b'.repeat(32),
        span_id: i.toString(16).padStart(16, '0'),
        category: i === 0 ? ('skill_invocation' as const) : ('tool_call' as const),
        skill: i === 0 ? skill : null,
        tool: `t-${i % 7}`,
        start_s: base.start_s + (i % 3600),
      }));
      const all = [invocation, ...children, ...big.slice(0, 700)];
      await store.insertSpans(all);
      await sealEverything(store, client);
      await store.insertSpans(big.slice(700));
      all.push(...big.slice(700));
      await sealEverything(store, client);
      await expectRollupsConsistent(client);
      const special = await client.query<{ n: string }>(
        "SELECT count(*) AS n FROM skill_special WHERE trace_key = 'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb'",
      );
      expect(Number(special.rows[0]?.n)).toBe(1);
      const day = Math.floor(base.start_s / 86400) * 86400;
      for (const groupBy of [[], ['model'], ['tool'], ['user']] as const) {
        const q = {
          ...QUERIES[0],
          skill,
          startS: day - 86400,
          endS: day + 2 * 86400,
          groupBy: [...groupBy],
          measures: ['traces', 'spans', 'tokens', 'latency_p99'],
        } as AggregateQuery;
        expectSameRows(await store.aggregate(q), reference(all, q));
      }
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('keeps the mappings of one trace id in two organizations written in one batch', async () => {
    const store = await open();
    try {
      const invocation = spans(14).find((r) => r.category === 'skill_invocation') as SpanRow;
      const other = { ...invocation, org_id: 'org-2', span_id: 'e'.repeat(16) };
      await store.insertSpans([invocation, other]);
      for (const sealNow of [false, true]) {
        if (sealNow) expect(await store.seal()).toBe(true);
        for (const row of [invocation, other]) {
          const q: AggregateQuery = {
            ...QUERIES[0],
            orgId: row.org_id,
            skill: row.skill as string,
            startS: row.start_s - 86400,
            endS: row.start_s + 86400,
            measures: ['traces', 'spans'],
          } as AggregateQuery;
          expect((await store.aggregate(q))[0]?.values, `${row.org_id} sealed ${sealNow}`).toEqual({
            traces: 1,
            spans: 1,
          });
        }
      }
    } finally {
      await store.close();
    }
  });

  it('counts a trace for a skill named after its spans were sealed, exactly once', async () => {
    const store = await open();
    try {
      await expectLateSkillCountedOnce(store, () => store.seal());
    } finally {
      await store.close();
    }
  });

  it('never seals past a transaction still writing: its spans count once it commits, sealed or not', async () => {
    const schema = freshSchemaName('t_seal');
    const store = await open(schema);
    const held = await sql(schema);
    try {
      const all = spans(3);
      const trace = all.find((r) => r.category === 'skill_invocation' && r.skill === 'sk-a')?.trace_id;
      const late = all.filter((r) => r.trace_id === trace && r.category !== 'skill_invocation');
      const rest = all.filter((r) => !late.includes(r));
      // A writer's transaction starts first (its id is the lower) and commits after the others.
      await held.query('BEGIN');
      for (const r of late) await held.query(INSERT_SPAN, spanParams(r));
      await store.insertSpans(rest);
      await store.seal();
      await expectExact(store, rest);
      await held.query('COMMIT');
      await expectExact(store, all);
      await store.seal();
      await expectExact(store, all);
      await sealEverything(store, held);
    } finally {
      await held.end();
      await store.close();
    }
  });

  it('seals in bounded steps, each exact, a transaction larger than the bound in one step', async () => {
    const schema = freshSchemaName('t_seal');
    const store = await open(schema);
    const client = await sql(schema);
    try {
      const all = spans(4);
      // Batches of 60 spans (a transaction each), then one of 400: more than a step's 100.
      const cut = all.length - 400;
      for (let i = 0; i < cut; i += 60) await store.insertSpans(all.slice(i, Math.min(i + 60, cut)));
      await store.insertSpans(all.slice(cut));
      const below = async () =>
        Number(
          (await client.query<{ n: string }>('SELECT count(*) AS n FROM spans WHERE xid < (SELECT w FROM sealed)'))
            .rows[0]?.n,
        );
      const stepper = await sql(schema);
      try {
        const sealedCounts: number[] = [];
        for (let step = 0; step < 1000; step++) {
          const before = await below();
          const result = await sealStep(stepper, 100);
          const after = await below();
          sealedCounts.push(after - before);
          await expectExact(store, all);
          if (!result.more && after === all.length) break;
        }
        expect(sealedCounts.length).toBeGreaterThan(5);
        // Every step sealed at most 100 spans, except the one that sealed the 400 of one transaction.
        expect(sealedCounts.filter((n) => n > 100)).toEqual([400]);
        expect(await below()).toBe(all.length);
      } finally {
        await stepper.end();
      }
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('refuses a trace id that is not 32 lowercase hex digits (sealed rows keep it as a uuid), and seals on', async () => {
    const store = await open();
    try {
      const all = spans(8);
      const good = all.find((r) => r.category === 'skill_invocation') as SpanRow;
      await expect(store.insertSpans([{ ...good, trace_id: 'T-1' }])).rejects.toThrow(/trace_id_hex/);
      await store.insertSpans(all);
      expect(await store.seal()).toBe(true);
      await expectExact(store, all);
    } finally {
      await store.close();
    }
  });

  it('two replicas writing and sealing one schema at once count every span once', async () => {
    const schema = freshSchemaName('t_seal');
    const [a, b] = [await open(schema), await open(schema)] as [PostgresTraceStore, PostgresTraceStore];
    try {
      const all = shuffle(spans(5), prng(5));
      const halves = [all.filter((_, i) => i % 2 === 0), all.filter((_, i) => i % 2 === 1)];
      const replica = async (store: PostgresTraceStore, rows: SpanRow[]) => {
        let sealed = 0;
        for (let i = 0; i < rows.length; i += 97) {
          await store.insertSpans(rows.slice(i, i + 97));
          if (await store.seal()) sealed++;
        }
        return sealed;
      };
      const steps = await Promise.all([replica(a, halves[0] as SpanRow[]), replica(b, halves[1] as SpanRow[])]);
      expect(steps[0] + steps[1]).toBeGreaterThan(0);
      await expectExact(a, all);
      await a.seal();
      await expectExact(b, all);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('migrates a schema from before the sealed layout: existing spans are sealed by the first step', async () => {
    const schema = freshSchemaName('t_seal');
    await (await open(schema)).close();
    const client = await sql(schema);
    try {
      // Back to the version 2 schema, with spans stored by it.
      await client.query(`DROP TABLE skill_spans, sealed, skill_rollup, skill_special; ALTER TABLE spans DROP COLUMN xid;
        ALTER TABLE trace_skills DROP COLUMN xid; DROP INDEX trace_skills_trace;
        ALTER TABLE spans DROP CONSTRAINT spans_trace_id_hex;
        ALTER TABLE trace_skills DROP CONSTRAINT trace_skills_trace_id_hex;
        ALTER TABLE spans DROP COLUMN provider, DROP COLUMN agent, DROP COLUMN cache_read_tokens,
          DROP COLUMN cache_creation_tokens;
        DELETE FROM traces_schema_migrations
        WHERE name IN ('003_sealed_skill_spans.sql', '004_skill_rollups.sql', '007_provider_agent_cache.sql')`);
      const all = beforeLaterColumns(spans(9));
      for (const r of all) await client.query(INSERT_SPAN, spanParams(r));
      await client.query(
        `INSERT INTO trace_skills (org_id, skill, skill_version, trace_id, start_s)
        SELECT org_id, skill, skill_version, trace_id, start_s FROM spans WHERE category = 'skill_invocation'`,
      );
      const store = await open(schema);
      try {
        await expectExact(store, all);
        await sealEverything(store, client);
        const sealedRows = await client.query<{ n: string }>(
          `SELECT count(*) AS n FROM skill_spans WHERE org_id = $1`,
          [ORG],
        );
        expect(Number(sealedRows.rows[0]?.n)).toBeGreaterThan(0);
        await expectExact(store, all);
      } finally {
        await store.close();
      }
    } finally {
      await client.end();
    }
  });
});
