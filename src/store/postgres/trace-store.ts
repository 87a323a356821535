/**
 * The server-mode trace engine: spans in PostgreSQL, the same statistics SQL as DuckDB in the
 * PostgreSQL dialect (store/stats/compile.ts), the same contract. Statistics read each skill's sealed
 * rows (sealing.ts, run in the background by whichever replica gets there first) and the unsealed
 * tails (skill-rows.ts), or the spans of an agent's traces (agent-rows.ts). A query whose signal aborts is cancelled on the server (pg_cancel_backend
 * of its connection).
 */
import type pg from 'pg';
import { compileAggregate } from '../stats/compile.ts';
import { toAggregateRows } from '../stats/decode.ts';
import {
  QueryCancelledError,
  TraceStoreUnavailableError,
  toSpanRows,
  type AggregateQuery,
  type AggregateRow,
  type InsertOutcome,
  type MetricPointRow,
  type SpanColumns,
  type SpanRow,
  type ToolUsageQuery,
  type ToolUsageRow,
  type ServerUsageQuery,
  type ServerUsageRow,
  type TraceStore,
} from '../trace-port.ts';
import { isConnectionFailure } from './pool.ts';
import { movingWatermark, readWatermark } from './watermark.ts';
import { sqlNumber } from '../sql-values.ts';
import { POSTGRES } from '../stats/dialect.ts';
import { compileServerUsage, compileToolUsage, toServerUsageRows, toToolUsageRows } from '../stats/tool-usage.ts';
import { sealInBackground } from '../seal-timer.ts';
import { sealStep } from './sealing.ts';
import { agentRows } from './agent-rows.ts';
import { sealedMarks, skillRows } from './skill-rows.ts';
import { factRows, firstSpanS } from './fact-rows.ts';
import { inStatsSnapshot } from './stats-snapshot.ts';
import {
  checkEvaluationFactsQuery,
  checkSubjectFactsQuery,
  type EvaluationFactsPage,
  type EvaluationFactsQuery,
  type SubjectFactsPage,
  type SubjectFactsQuery,
} from '../facts-port.ts';
import { compileEvaluationFacts, toEvaluationFacts } from '../stats/evaluation-facts.ts';
import { compileSubjectFacts, toSubjectFacts, type SubjectSource } from '../stats/subject-facts.ts';
import { MonthPartitions } from './partitions.ts';
import { pruneInTransaction } from './retention.ts';
import { retryCarefully, writeEvaluations, writePoints, writeSpans } from './span-writes.ts';
import type { EvaluationRow } from '../evaluation-row.ts';
import type { StoredBytes } from '../stored-bytes.ts';
import { TRACE_TABLES, tableBytes } from './stored-bytes.ts';
import { AdmittedNames, type AgentNameRequest, type AgentNameUse } from '../agent-names.ts';
import { admitInTransaction } from './agent-names.ts';

export interface PostgresTraceOptions {
  /** How often this replica tries a sealing step (ms; 0: only when `seal()` is called). Default 5,000. */
  sealEveryMs?: number;
  /** The most spans one sealing step seals (each step is one transaction). Default 500,000. */
  sealStepSpans?: number;
  /** Where a failed background step is reported (default: stderr; at most once a minute). */
  onNotice?: (message: string) => void;
  /**
   * Whether statistics sum the rollups where a query's shape allows (summed-rows.ts; default
   * true). Off, every query reads rows: tests compare the two answers.
   */
  rollups?: boolean;
  /** Now, in epoch seconds, for the window of monthly partitions (partitions.ts; tests move it). */
  now?: () => number;
}

const ANALYZE_EVERY_MS = 30_000;

export class PostgresTraceStore implements TraceStore {
  readonly engine = 'postgres' as const;
  private readonly pool: pg.Pool;
  /** Rows inserted since the last ANALYZE, and the table size it saw. */
  private unanalyzed = 0;
  private analyzedRows = 0;
  private analyzing: Promise<void> | null = null;
  private analyzedAt = -Infinity;
  private readonly timer: NodeJS.Timeout | null;
  private sealing: Promise<boolean> | null = null;
  private readonly notice: (message: string) => void;
  private readonly sealStepSpans: number;
  private readonly rollups: boolean;
  private readonly partitions: MonthPartitions;
  private readonly names = new AdmittedNames();

  /** `rows`: the size of `spans` as the planner last estimated it. */
  constructor(pool: pg.Pool, rows = 0, options: PostgresTraceOptions = {}) {
    this.pool = pool;
    this.analyzedRows = rows;
    this.notice = options.onNotice ?? ((message) => process.stderr.write(`trace store: ${message}\n`));
    this.sealStepSpans = options.sealStepSpans ?? 500_000;
    this.rollups = options.rollups ?? true;
    this.partitions = new MonthPartitions(pool, options.now ?? (() => Date.now() / 1000), this.notice);
    // A tick while a step runs (the first after a migration may take minutes) is skipped, not
    // queued. Each tick also keeps the months ahead partitioned (hourly).
    this.timer = sealInBackground(
      options.sealEveryMs ?? 5_000,
      async () => {
        await this.partitions
          .maintain()
          .catch((err: unknown) => this.notice(`partition upkeep failed: ${String(err)}`));
        if (this.sealing === null) await this.seal();
      },
      this.notice,
      () => this.pool.ended,
    );
  }

  /**
   * Seals now, after the step in progress (if any), in steps of at most `sealStepSpans` spans until
   * what had ended when it began is sealed. False when another replica holds the sealing lock;
   * statistics are exact either way, only slower while rows wait to be sealed.
   */
  async seal(): Promise<boolean> {
    while (this.sealing !== null) await this.sealing.catch(() => undefined);
    if (this.pool.ended) return false;
    const steps = (async () => {
      const client = await this.pool.connect().catch((err: unknown) => this.unavailable(err));
      // A connection whose step failed is destroyed, not pooled: it may still hold the session lock.
      let failed: Error | undefined;
      try {
        for (;;) {
          const step = await sealStep(client, this.sealStepSpans);
          if (step.locked) return false;
          if (!step.more || this.pool.ended) return true;
        }
      } catch (err) {
        failed = err instanceof Error ? err : new Error(String(err));
        throw err;
      } finally {
        client.release(failed);
      }
    })();
    this.sealing = steps;
    try {
      return await steps;
    } finally {
      this.sealing = null;
    }
  }

  /**
   * Refreshes the planner's statistics once the tables have grown by a tenth (at least 1,000
   * rows) since the last time, in the background, at most every ANALYZE_EVERY_MS after the first:
   * autovacuum does the same only after its next wake-up (and never for the partitioned parent),
   * and a statistics query planned on an empty table's estimates runs a nested loop. Between two,
   * the planner scales the last statistics to the tables' current size. An ANALYZE of `spans` reads
   * a sample of the parent and of each partition, about the whole table while it is small: run
   * after every tenth of growth, it took 13 % of two replicas' ingestion into a new database.
   */
  private analyzeAfterGrowth(inserted: number): void {
    this.unanalyzed += inserted;
    if (this.analyzing !== null || this.unanalyzed < Math.max(1000, this.analyzedRows / 10)) return;
    if (Date.now() - this.analyzedAt < ANALYZE_EVERY_MS) return;
    this.analyzedAt = Date.now();
    const rows = this.analyzedRows + this.unanalyzed;
    this.unanalyzed = 0;
    this.analyzing = this.pool
      .query('ANALYZE spans, trace_skills, trace_agents, skill_spans, skill_rollup, skill_special, evaluations')
      .then(
        () => {
          this.analyzedRows = rows;
        },
        () => undefined,
      )
      .finally(() => {
        this.analyzing = null;
      });
  }

  /** Creates the monthly partitions of the months around now (partitions.ts), at start; the timer keeps them hourly. */
  async maintainPartitions(): Promise<void> {
    await this.partitions.maintain(true).catch((err: unknown) => this.unavailable(err));
  }

  private unavailable(err: unknown): never {
    if (isConnectionFailure(err)) throw new TraceStoreUnavailableError('the trace database cannot be reached');
    throw err;
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1').catch((err: unknown) => this.unavailable(err));
  }

  /** Idempotent, as the registry store's. */
  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    await this.sealing?.catch(() => undefined);
    await this.analyzing;
    if (!this.pool.ended) await this.pool.end();
  }

  async countSpans(): Promise<number> {
    const res = await this.pool
      .query<{ n: string }>('SELECT COUNT(*)::bigint AS n FROM spans')
      .catch((err: unknown) => this.unavailable(err));
    return sqlNumber(res.rows[0]?.n);
  }

  /** The trace tables with their indexes and partitions (stored-bytes.ts). */
  storedBytes(): Promise<StoredBytes> {
    return tableBytes(this.pool, TRACE_TABLES);
  }

  /**
   * Runs `work` in one transaction on one connection; a failure rolls it back. `work` learns on
   * which attempt it runs: a write whose rows were partly stored already, or that deadlocked with
   * another replica's, runs again carefully (span-writes.ts). An abort of `signal` before the
   * transaction begins withdraws it (QueryCancelledError, nothing written); once begun it is not
   * withdrawn, so the caller learns the outcome of a commit, never an error in its place.
   */
  private async inTransaction<T>(
    work: (client: pg.PoolClient, careful: boolean) => Promise<T>,
    signal?: AbortSignal,
    attempt = 0,
  ): Promise<T> {
    if (signal?.aborted) throw new QueryCancelledError();
    const client = await this.pool.connect().catch((err: unknown) => this.unavailable(err));
    let again = false;
    let result: T | undefined;
    try {
      if (signal?.aborted) throw new QueryCancelledError();
      await client.query('BEGIN');
      result = await work(client, attempt > 0);
      await client.query('COMMIT');
    } catch (err) {
      if (err instanceof QueryCancelledError) throw err;
      await client.query('ROLLBACK').catch(() => undefined);
      // A row routed to the default partition while a month's partition was being attached fails
      // the default partition's new constraint (partitions.ts): written again, it goes to the month.
      const { code, table } = err as { code?: string; table?: string };
      const partitioned = code === '23514' && table?.endsWith('_default') === true;
      again = attempt < 3 && (partitioned || retryCarefully(err));
      if (!again) this.unavailable(err);
    } finally {
      client.release();
    }
    if (again) return this.inTransaction(work, undefined, attempt + 1);
    return result as T;
  }

  async insertSpans(rows: readonly SpanRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    if (rows.length === 0) return { stored: 0, duplicates: 0 };
    const outcome = await movingWatermark(
      this.pool,
      this.inTransaction((client, careful) => writeSpans(client, rows, careful), signal),
    );
    this.analyzeAfterGrowth(outcome.stored);
    return outcome;
  }

  /** The `trace_writes` sequence (watermark.ts). */
  watermark(): Promise<string> {
    return readWatermark(this.pool);
  }

  insertColumns(spans: SpanColumns, signal?: AbortSignal): Promise<InsertOutcome> {
    return this.insertSpans(toSpanRows(spans), signal);
  }

  async insertMetricPoints(points: readonly MetricPointRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    if (points.length === 0) return { stored: 0, duplicates: 0 };
    return movingWatermark(
      this.pool,
      this.inTransaction((client, careful) => writePoints(client, points, careful), signal),
    );
  }

  async insertEvaluations(rows: readonly EvaluationRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    if (rows.length === 0) return { stored: 0, duplicates: 0 };
    return movingWatermark(this.pool, this.inTransaction(writeEvaluations(rows), signal));
  }

  /** In one transaction (agent-names.ts); names it admitted are answered from memory. */
  admitAgentNames(request: AgentNameRequest, signal?: AbortSignal): Promise<boolean[]> {
    const { orgId, cap } = request;
    const admit = (uses: AgentNameUse[]) => this.inTransaction((c) => admitInTransaction(c, orgId, cap, uses), signal);
    return this.names.admit(request, admit, signal);
  }

  /**
   * Retention (under RETENTION_LOCKS), without the request statement timeout, in one transaction:
   * the sealed rows before the cutoff with the rollups that count them, the mappings of traces
   * left with no span (a trace's mappings stay while any of its spans does), the evaluations, then
   * the spans and metric points (partitions.ts: the months that end by the cutoff dropped whole, last).
   */
  async pruneBefore(cutoffS: number): Promise<number> {
    let deleted = 0;
    await movingWatermark(
      this.pool,
      this.inTransaction(async (client) => {
        deleted = await pruneInTransaction(client, cutoffS);
      }),
    );
    // Apart from the sealing lock: a writer may hold a call's row while it waits for that lock
    // (postgres/call-pairs.ts), and a call whose spans all start before the cutoff is only forgotten.
    await this.pool
      .query('DELETE FROM tool_call_pairs WHERE last_s < $1', [cutoffS])
      .catch((err: unknown) => this.unavailable(err));
    return deleted;
  }

  /**
   * One statement in a statistics snapshot (stats-snapshot.ts). For a skill it first reads the
   * sealed watermark and whether anything lies above it: the watermark goes into the statement as a
   * value (so the planner sees how few rows the tails hold), the tails only when they can hold
   * rows, and both reads share one snapshot. An agent's statement reads spans alone.
   */
  async aggregate(query: AggregateQuery, signal?: AbortSignal): Promise<AggregateRow[]> {
    const rows = await this.withClient(signal, (client) =>
      inStatsSnapshot(client, async () => {
        const { subject } = query;
        const source =
          'agent' in subject ? agentRows(subject) : skillRows(subject, await sealedMarks(client, this.rollups));
        const { sql, params } = compileAggregate(query, source, POSTGRES);
        return (await client.query(sql, params)).rows as Record<string, unknown>[];
      }),
    );
    return toAggregateRows(rows, query);
  }

  /** Detection's facts (fact-rows.ts). */
  async subjectFacts(query: SubjectFactsQuery, signal?: AbortSignal): Promise<SubjectFactsPage> {
    checkSubjectFactsQuery(query);
    const compile = (source: SubjectSource) => compileSubjectFacts(query, source, POSTGRES);
    return toSubjectFacts(await this.withClient(signal, (c) => factRows(c, query.subjectType, compile)), query);
  }

  /**
   * Detection's evaluation scores (fact-rows.ts). Its joins of traces and evaluations hold
   * thousands of rows a side; planned on stale statistics (a table sealed or filled since the last
   * ANALYZE) as a row each, a nested loop took 400 s where a hash join takes 0.3 s: none for it.
   */
  async evaluationFacts(query: EvaluationFactsQuery, signal?: AbortSignal): Promise<EvaluationFactsPage> {
    checkEvaluationFactsQuery(query);
    const compile = (source: SubjectSource) => compileEvaluationFacts(query, source, POSTGRES);
    const rows = await this.withClient(signal, (c) => factRows(c, query.subjectType, compile, 'enable_nestloop = off'));
    return toEvaluationFacts(rows, query);
  }

  async activeOrganizations(sinceS: number, limit: number): Promise<string[]> {
    const sql = `SELECT org_id FROM (SELECT org_id FROM trace_skills WHERE start_s >= $1
      UNION SELECT org_id FROM trace_agents WHERE start_s >= $1) o ORDER BY org_id COLLATE "C" LIMIT $2`;
    const res = await this.withClient(undefined, (client) => client.query<{ org_id: string }>(sql, [sinceS, limit]));
    return res.rows.map((r) => r.org_id);
  }

  firstSpanS(orgId: string, sinceS: number): Promise<number | null> {
    return this.withClient(undefined, (c) => firstSpanS(c, orgId, sinceS));
  }

  async toolUsage(query: ToolUsageQuery, signal?: AbortSignal): Promise<ToolUsageRow[]> {
    const compiled = compileToolUsage(query, query.tools, POSTGRES, 'TEXT');
    if (compiled === null) return [];
    return toToolUsageRows(
      await this.withClient(
        signal,
        async (client) => (await client.query(compiled.sql, compiled.params)).rows as Record<string, unknown>[],
      ),
    );
  }

  async serverUsage(query: ServerUsageQuery, signal?: AbortSignal): Promise<ServerUsageRow[]> {
    const compiled = compileServerUsage(query, query.servers, POSTGRES, 'TEXT');
    if (compiled === null) return [];
    const rows = await this.withClient(
      signal,
      async (client) => (await client.query(compiled.sql, compiled.params)).rows as Record<string, unknown>[],
    );
    return toServerUsageRows(rows, String);
  }

  /** Runs `work` on one connection, cancelled on the server (pg_cancel_backend) when `signal` aborts. */
  private async withClient<T>(
    signal: AbortSignal | undefined,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    if (signal?.aborted) throw new QueryCancelledError();
    const client = await this.pool.connect().catch((err: unknown) => this.unavailable(err));
    const pid = (client as unknown as { processID?: number }).processID;
    const onAbort = () => {
      if (pid !== undefined) void this.pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await work(client);
    } catch (err) {
      if (signal?.aborted) throw new QueryCancelledError();
      return this.unavailable(err);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      client.release();
    }
  }
}
