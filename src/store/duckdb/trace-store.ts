/**
 * The embedded trace engine: one DuckDB file, behind the TraceStore port.
 *
 * Writes go through one connection, the writer (writer.ts: group commit, sealing, retention).
 * Sealing copies the spans of each skill's traces into `skill_spans`, clustered by skill and time,
 * so a statistics query scans one skill's rows instead of joining every span of the range with the
 * mapping (skill-rows.ts). Queries run in queries.ts, each on its own connection, so a deadline
 * interrupts it alone. This class opens and closes the engine and hands each call to its side.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { CompiledAggregate } from '../stats/compile.ts';
import {
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
import { unstorable, unstorableEvaluation, unstorablePoint } from './append.ts';
import type { EvaluationRow } from '../evaluation-row.ts';
import type { EvaluationFactsPage, EvaluationFactsQuery, SubjectFactsPage, SubjectFactsQuery } from '../facts-port.ts';
import { Dictionary } from './dictionary.ts';
import { AdmittedNames, type AgentNameRequest } from '../agent-names.ts';
import { admitOnWriter } from './agent-names.ts';
import { KnownValues } from './known-values.ts';
import { TraceQueries } from './queries.ts';
import { migrate } from './schema.ts';
import { sealInBackground } from '../seal-timer.ts';
import { TraceWriter } from './writer.ts';
import { databaseFileBytes, type StoredBytes } from '../stored-bytes.ts';
import { SettledWrites } from '../watermark.ts';

export interface DuckDbTraceOptions {
  /** Spans are sealed once committed this long ago (default 10 s); 0 seals at every sealing. */
  sealAgeMs?: number;
  /** How often sealing runs (default 5 s); 0 turns the timer off (tests seal by hand). */
  sealEveryMs?: number;
  /** Progress of long work (migrations, sealing many spans) and failures of background sealing. */
  onNotice?: (message: string) => void;
  /**
   * Dimension values kept in memory, a cache of the dictionary table (default 10,000; any
   * non-negative integer: tests use tiny ones). Values beyond it are stored and counted all the same.
   */
  dictionaryValues?: number;
  /** DuckDB's memory_limit in MiB (default 1,024): its buffers, spilled to disk beyond it where it can. */
  memoryLimitMb?: number;
  /**
   * Recognizing resent rows without reading the table on every write (day-identities.ts): the
   * fingerprints held at most, per table (spans; metric points; evaluations), default 4,000,000, 17 to 34
   * bytes each. Days beyond it are loaded again when needed; a day larger than it is looked up.
   */
  identityMaxKeys?: number;
  /** Shared memory of a KnownValues (known-values.ts) the dictionary keeps told of every value. */
  knownValues?: SharedArrayBuffer;
}

const DEFAULT_DICTIONARY_VALUES = 10_000;
const DEFAULT_MEMORY_LIMIT_MB = 1024;
const DEFAULT_IDENTITY_MAX_KEYS = 4_000_000;

export class DuckDbTraceStore implements TraceStore {
  readonly engine = 'duckdb' as const;
  private readonly instance: DuckDBInstance;
  /** The writer's connection, closed after the writer is idle (reads run on their own: queries.ts). */
  private readonly conn: DuckDBConnection;
  private readonly writer: TraceWriter;
  private readonly writes = new SettledWrites();
  private readonly names = new AdmittedNames();
  private readonly dictionary: Dictionary;
  private readonly queries: TraceQueries;
  private readonly timer: NodeJS.Timeout | null;
  private closed = false;

  private constructor(
    instance: DuckDBInstance,
    conn: DuckDBConnection,
    writer: TraceWriter,
    dictionary: Dictionary,
    options: DuckDbTraceOptions,
  ) {
    this.instance = instance;
    this.conn = conn;
    this.writer = writer;
    this.dictionary = dictionary;
    this.queries = new TraceQueries(instance, dictionary, writer);
    this.timer = sealInBackground(
      options.sealEveryMs ?? 5_000,
      () => (this.closed ? Promise.resolve() : this.writer.sealAged()),
      options.onNotice ?? (() => undefined),
      () => this.closed,
    );
  }

  static async open(file: string, options: DuckDbTraceOptions = {}): Promise<DuckDbTraceStore> {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    const memoryLimitMb = options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB;
    const dictionaryValues = options.dictionaryValues ?? DEFAULT_DICTIONARY_VALUES;
    if (!(Number.isInteger(memoryLimitMb) && memoryLimitMb > 0))
      throw new Error(`memoryLimitMb must be a positive integer, got ${memoryLimitMb}`);
    if (!(Number.isInteger(dictionaryValues) && dictionaryValues >= 0))
      throw new Error(`dictionaryValues must be a non-negative integer, got ${dictionaryValues}`);
    const instance = await DuckDBInstance.create(file, { memory_limit: `${memoryLimitMb}MiB` });
    const conn = await instance.connect();
    await migrate(conn, options.onNotice);
    const known = options.knownValues === undefined ? undefined : KnownValues.over(options.knownValues);
    const dictionary = await Dictionary.load(conn, dictionaryValues, known);
    const writer = await TraceWriter.open(conn, dictionary, {
      sealAgeMs: options.sealAgeMs ?? 10_000,
      notice: options.onNotice ?? (() => undefined),
      identityMaxKeys: options.identityMaxKeys ?? DEFAULT_IDENTITY_MAX_KEYS,
    });
    const store = new DuckDbTraceStore(instance, conn, writer, dictionary, options);
    // Whatever an earlier process stored (or a migration converted) is sealed before the first query.
    await store.seal();
    return store;
  }

  private live(): void {
    if (this.closed) throw new TraceStoreUnavailableError();
  }

  async ping(): Promise<void> {
    this.live();
    await this.queries.run((conn) => conn.run('SELECT 1'));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    // The queries first: closing the instance under a running one aborts the process.
    await this.queries.close();
    await this.writer.idle();
    this.conn.closeSync();
    this.instance.closeSync();
  }

  /**
   * Runs `work` on a fresh connection to the same database, for tools that run SQL directly
   * (benchmarks, tests); close waits for it.
   */
  withConnection<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    this.live();
    return this.queries.run(work);
  }

  /** A fresh connection to the same database for tests' own SQL: close it before the store's close. */
  async connect(): Promise<DuckDBConnection> {
    this.live();
    return this.instance.connect();
  }

  async countSpans(): Promise<number> {
    this.live();
    const rows = await this.queries.run(async (conn) =>
      (await conn.runAndReadAll('SELECT COUNT(*) AS n FROM spans')).getRowObjectsJS(),
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** The database file and its WAL (store/stored-bytes.ts), the file as the engine names it. */
  async storedBytes(): Promise<StoredBytes> {
    this.live();
    const sql = 'SELECT path FROM duckdb_databases() WHERE database_name = current_database()';
    const [row] = await this.queries.run(async (conn) => (await conn.runAndReadAll(sql)).getRowObjectsJS());
    return databaseFileBytes(typeof row?.path === 'string' ? row.path : null, (file) => `${file}.wal`);
  }

  /**
   * Resolves once the new rows are committed; concurrent calls share one transaction. A batch that
   * cannot be stored is refused here, alone, rather than failing the batches it would be grouped with.
   */
  insertColumns(spans: SpanColumns, signal?: AbortSignal): Promise<InsertOutcome> {
    return this.insertSpans(toSpanRows(spans), signal);
  }

  insertSpans(rows: readonly SpanRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    this.live();
    for (const r of rows) {
      const why = unstorable(r);
      if (why !== null) return Promise.reject(new Error(why));
    }
    return this.writes.after(this.writer.append({ rows, points: [], evaluations: [] }, signal));
  }

  /** Stored with the next group of appends (one transaction). */
  insertMetricPoints(points: readonly MetricPointRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    this.live();
    for (const p of points) {
      const why = unstorablePoint(p);
      if (why !== null) return Promise.reject(new Error(why));
    }
    return this.writes.after(this.writer.append({ rows: [], points, evaluations: [] }, signal));
  }

  /** Stored with the next group of appends (one transaction). */
  insertEvaluations(evaluations: readonly EvaluationRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    this.live();
    for (const e of evaluations) {
      const why = unstorableEvaluation(e);
      if (why !== null) return Promise.reject(new Error(why));
    }
    return this.writes.after(this.writer.append({ rows: [], points: [], evaluations }, signal));
  }

  async watermark(): Promise<string> {
    this.live();
    return this.writes.mark;
  }

  /** On the writer, between its appends (agent-names.ts); names it admitted are answered from memory. */
  admitAgentNames(request: AgentNameRequest, signal?: AbortSignal): Promise<boolean[]> {
    this.live();
    return this.names.admit(
      request,
      (uses) => this.writer.exclusive((conn) => admitOnWriter(conn, request.orgId, request.cap, uses)),
      signal,
    );
  }

  /** Retention: on the writer, between appends and seal steps (pruning.ts). */
  pruneBefore(cutoffS: number): Promise<number> {
    this.live();
    if (!Number.isSafeInteger(cutoffS)) return Promise.reject(new Error(`cutoffS must be an integer, got ${cutoffS}`));
    return this.writes.after(this.writer.prune(cutoffS));
  }

  /** Seals every span committed so far (tools and tests; the timer seals aged spans by itself). */
  seal(): Promise<void> {
    this.live();
    return this.writer.sealAll();
  }

  /** What the writer holds of stored identities (tests check loads and bounds). */
  get identityStats(): TraceWriter['identityStats'] {
    return this.writer.identityStats;
  }

  /** Dimension values the engine holds in memory now (at most `dictionaryValues`; tests check it). */
  get dictionarySize(): number {
    return this.dictionary.size;
  }

  /** The SQL `aggregate` runs for `query` now (benchmarks compare it with the endpoint). */
  async compile(query: AggregateQuery): Promise<CompiledAggregate> {
    this.live();
    return this.queries.compile(query);
  }

  async aggregate(query: AggregateQuery, signal?: AbortSignal): Promise<AggregateRow[]> {
    return this.queries.aggregate(query, signal);
  }

  async toolUsage(query: ToolUsageQuery, signal?: AbortSignal): Promise<ToolUsageRow[]> {
    return this.queries.toolUsage(query, signal);
  }

  async subjectFacts(query: SubjectFactsQuery, signal?: AbortSignal): Promise<SubjectFactsPage> {
    return this.queries.subjectFacts(query, signal);
  }

  async evaluationFacts(query: EvaluationFactsQuery, signal?: AbortSignal): Promise<EvaluationFactsPage> {
    return this.queries.evaluationFacts(query, signal);
  }

  async activeOrganizations(sinceS: number, limit: number): Promise<string[]> {
    return this.queries.activeOrganizations(sinceS, limit);
  }

  async firstSpanS(orgId: string, sinceS: number): Promise<number | null> {
    return this.queries.firstSpanS(orgId, sinceS);
  }

  async serverUsage(query: ServerUsageQuery, signal?: AbortSignal): Promise<ServerUsageRow[]> {
    return this.queries.serverUsage(query, signal);
  }
}
