/**
 * The embedded trace engine: one DuckDB file.
 *
 * Writes go through one connection, the writer (writer.ts: group commit, sealing, retention).
 * Sealing copies the spans of each skill's traces into `skill_spans`, clustered by skill and time,
 * so a statistics query scans one skill's rows instead of joining every span of the range with the
 * mapping (skill-rows.ts). Every query gets its own connection, so a deadline interrupts it alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { compileAggregate, type CompiledAggregate } from '../stats/compile.ts';
import { toAggregateRows } from '../stats/decode.ts';
import type { DimensionCodes } from '../stats/row-source.ts';
import {
  QueryCancelledError,
  TraceStoreUnavailableError,
  toSpanRows,
  type AggregateQuery,
  type AggregateRow,
  type Dimension,
  type InsertOutcome,
  type MetricPointRow,
  type SpanColumns,
  type SpanRow,
  type ToolUsageQuery,
  type ToolUsageRow,
  type TraceStore,
} from '../trace-port.ts';
import { unstorable, unstorablePoint } from './append.ts';
import { Dictionary, NO_CODE, isEncoded } from './dictionary.ts';
import { migrate } from './schema.ts';
import { skillRows } from './skill-rows.ts';
import { DUCKDB } from '../stats/dialect.ts';
import { compileToolUsage, toToolUsageRows } from '../stats/tool-usage.ts';
import { sealInBackground } from '../seal-timer.ts';
import { TraceWriter } from './writer.ts';
import { databaseFileBytes, type StoredBytes } from '../stored-bytes.ts';

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
   * fingerprints held at most, per table (spans; metric points), default 4,000,000, 17 to 34
   * bytes each. Days beyond it are loaded again when needed; a day larger than it is looked up.
   */
  identityMaxKeys?: number;
}

const DEFAULT_DICTIONARY_VALUES = 10_000;
const DEFAULT_MEMORY_LIMIT_MB = 1024;
const DEFAULT_IDENTITY_MAX_KEYS = 4_000_000;

export class DuckDbTraceStore implements TraceStore {
  readonly engine = 'duckdb' as const;
  private readonly instance: DuckDBInstance;
  /** The writer's connection: also answers ping and countSpans. */
  private readonly conn: DuckDBConnection;
  private readonly writer: TraceWriter;
  private readonly dictionary: Dictionary;
  private readonly timer: NodeJS.Timeout | null;
  private closed = false;
  /** Queries in flight (settled promises) and their connections: close interrupts and waits for them. */
  private readonly inflight = new Set<Promise<void>>();
  private readonly active = new Set<DuckDBConnection>();

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
    const dictionary = await Dictionary.load(conn, dictionaryValues);
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
    await this.conn.run('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    // Closing the instance under a running query crashes the process (a native abort), so the
    // queries are interrupted and waited for first.
    for (const conn of this.active) conn.interrupt();
    await Promise.all(this.inflight);
    await this.writer.idle();
    this.conn.closeSync();
    this.instance.closeSync();
  }

  /** A fresh connection to the same database, for tools that run SQL directly (benchmarks). */
  async connect(): Promise<DuckDBConnection> {
    this.live();
    return this.instance.connect();
  }

  async countSpans(): Promise<number> {
    this.live();
    const rows = (await this.conn.runAndReadAll('SELECT COUNT(*) AS n FROM spans')).getRowObjectsJS();
    return Number(rows[0]?.n ?? 0);
  }

  /** The database file and its WAL (store/stored-bytes.ts), the file as the engine names it. */
  async storedBytes(): Promise<StoredBytes> {
    this.live();
    const sql = 'SELECT path FROM duckdb_databases() WHERE database_name = current_database()';
    const [row] = (await this.conn.runAndReadAll(sql)).getRowObjectsJS();
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
    return this.writer.append(rows, [], signal);
  }

  /** Stored with the next group of appends (one transaction). */
  insertMetricPoints(points: readonly MetricPointRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    this.live();
    for (const p of points) {
      const why = unstorablePoint(p);
      if (why !== null) return Promise.reject(new Error(why));
    }
    return this.writer.append([], points, signal);
  }

  /** Retention: on the writer, between appends and seal steps (pruning.ts). */
  pruneBefore(cutoffS: number): Promise<number> {
    this.live();
    if (!Number.isSafeInteger(cutoffS)) return Promise.reject(new Error(`cutoffS must be an integer, got ${cutoffS}`));
    return this.writer.prune(cutoffS);
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
    const conn = await this.instance.connect();
    try {
      return await this.compileOn(conn, query);
    } finally {
      conn.closeSync();
    }
  }

  /**
   * Compiles on the query's connection: the codes of the values it binds (filters, onlyGroups)
   * come from the dictionary's cache or one lookup in dim_values; a value no span has gets NO_CODE.
   */
  private async compileOn(conn: DuckDBConnection, query: AggregateQuery): Promise<CompiledAggregate> {
    const values: string[] = [];
    for (const f of query.filters) if (isEncoded(f.key)) values.push(...f.values.map(String));
    for (const g of query.onlyGroups ?? []) {
      for (const d of query.groupBy) {
        const v = g[d];
        if (isEncoded(d) && v !== null && v !== undefined) values.push(String(v));
      }
    }
    const codes = values.length === 0 ? new Map<string, number>() : await this.dictionary.codesOf(conn, values);
    const key = this.writer.skillKey(query.orgId, query.skill);
    const dimensionCodes: DimensionCodes = {
      encode: (value) => codes.get(String(value)) ?? NO_CODE,
      sortKey: (column) => `(SELECT value FROM dim_values WHERE id = ${column})`,
    };
    const source = {
      ...skillRows(key, this.writer.hasUnsealed),
      codes: (dim: Dimension) => (isEncoded(dim) ? dimensionCodes : undefined),
    };
    return compileAggregate(query, source, DUCKDB);
  }

  async aggregate(query: AggregateQuery, signal?: AbortSignal): Promise<AggregateRow[]> {
    return this.query(signal, async (conn) => {
      const { sql, params } = await this.compileOn(conn, query);
      if (signal?.aborted) throw new QueryCancelledError();
      const rows = (await conn.runAndReadAll(sql, params)).getRowObjectsJS();
      const encoded = query.groupBy.filter(isEncoded);
      const codes = encoded.flatMap((d) =>
        rows
          .map((r) => r[`g_${d}`])
          .filter((v) => v !== null && v !== undefined)
          .map(Number),
      );
      const values = codes.length === 0 ? new Map<number, string>() : await this.dictionary.valuesOf(conn, codes);
      return toAggregateRows(rows, query, (dim, stored) =>
        isEncoded(dim) ? (values.get(Number(stored)) as string) : String(stored),
      );
    });
  }

  /** Over `spans` (every stored span), with tool names and servers bound as their dictionary codes. */
  async toolUsage(query: ToolUsageQuery, signal?: AbortSignal): Promise<ToolUsageRow[]> {
    return this.query(signal, async (conn) => {
      const values = query.tools.flatMap((t) => (t.server === null ? [t.tool] : [t.tool, t.server]));
      const codes = values.length === 0 ? new Map<string, number>() : await this.dictionary.codesOf(conn, values);
      const entries = query.tools.flatMap((t) => {
        const tool = codes.get(t.tool);
        const server = t.server === null ? null : codes.get(t.server);
        return tool === undefined || server === undefined ? [] : [{ ...t, tool, server }];
      });
      const compiled = compileToolUsage(query, entries, DUCKDB, 'INTEGER');
      if (compiled === null) return [];
      if (signal?.aborted) throw new QueryCancelledError();
      return toToolUsageRows((await conn.runAndReadAll(compiled.sql, compiled.params)).getRowObjectsJS());
    });
  }

  /**
   * Runs `work` on a fresh connection that an abort of `signal` interrupts. Every query, from its
   * connect to its connection's close, is in `inflight`: close waits for them all (closing the
   * instance under a running query or a pending connect aborts the process).
   */
  private query<T>(signal: AbortSignal | undefined, work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    this.live();
    if (signal?.aborted) return Promise.reject(new QueryCancelledError());
    const run = this.runQuery(signal, work);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.inflight.add(settled);
    void settled.then(() => this.inflight.delete(settled));
    return run;
  }

  private async runQuery<T>(signal: AbortSignal | undefined, work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const conn = await this.instance.connect().catch(() => {
      throw new TraceStoreUnavailableError();
    });
    const onAbort = () => conn.interrupt();
    signal?.addEventListener('abort', onAbort, { once: true });
    this.active.add(conn);
    try {
      // An abort (or a close) while the connection was being made found no listener yet.
      if (signal?.aborted) throw new QueryCancelledError();
      if (this.closed) throw new TraceStoreUnavailableError();
      return await work(conn);
    } catch (err) {
      if (signal?.aborted) throw new QueryCancelledError();
      if (this.closed) throw new TraceStoreUnavailableError();
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.active.delete(conn);
      conn.closeSync();
    }
  }
}
