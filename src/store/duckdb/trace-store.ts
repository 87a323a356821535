/**
 * The embedded trace engine: one DuckDB file.
 *
 * Writes go through one connection: appends of concurrent requests are committed together (group
 * commit), every span gets the next sequence number, and each skill invocation adds a trace ->
 * skill mapping (append.ts). Sealing (sealing.ts) runs on the same connection, for spans committed at least
 * `sealAgeMs` ago, every `sealEveryMs`, and once at open: it copies the spans of each skill's
 * traces into `skill_spans`, clustered by skill and time, so a statistics query scans one skill's
 * rows instead of joining every span of the range with the mapping (skill-rows.ts).
 * Every query gets its own connection, so a deadline interrupts it alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { compileAggregate, toAggregateRows, type CompiledAggregate, type DimensionCodes } from '../stats-sql.ts';
import {
  QueryCancelledError,
  TraceStoreUnavailableError,
  toSpanRows,
  type AggregateQuery,
  type AggregateRow,
  type Dimension,
  type MetricPointRow,
  type SpanColumns,
  type SpanRow,
  type ToolUsageQuery,
  type ToolUsageRow,
  type TraceStore,
} from '../trace-port.ts';
import { appendSpans, unstorable, unstorablePoint } from './append.ts';
import { Dictionary, NO_CODE, isEncoded } from './dictionary.ts';
import { migrate } from './schema.ts';
import { seal } from './sealing.ts';
import { pruneBefore } from './pruning.ts';
import { skillRows } from './skill-rows.ts';
import { sqlText } from '../sql-values.ts';
import { DUCKDB } from '../sql-dialect.ts';
import { compileToolUsage, toToolUsageRows } from '../tool-usage-sql.ts';
import { sealInBackground } from '../seal-timer.ts';
import { databaseFileBytes, type StoredBytes } from '../stored-bytes.ts';

const SEAL_STEP = 500_000;
const SEAL_TURN_MS = 1_000;
export interface DuckDbTraceOptions {
  /** Spans are sealed once committed this long ago (default 10 s); 0 seals at every sealing. */
  sealAgeMs?: number;
  /** How often sealing runs (default 5 s); 0 turns the timer off (tests seal by hand). */
  sealEveryMs?: number;
  /** Progress of long work (migrations, sealing many spans) and failures of background sealing. */
  onNotice?: (message: string) => void;
  /**
   * Dimension values kept in memory, a cache of the dictionary table (default 100,000; any
   * non-negative integer: tests use tiny ones). Values beyond it are stored and counted all the same.
   */
  dictionaryValues?: number;
  /** DuckDB's memory_limit in MiB (default 1,024): its buffers, spilled to disk beyond it where it can. */
  memoryLimitMb?: number;
}

const DEFAULT_DICTIONARY_VALUES = 10_000;
const DEFAULT_MEMORY_LIMIT_MB = 1024;

interface PendingAppend {
  rows: readonly SpanRow[];
  points: readonly MetricPointRow[];
  resolve: () => void;
  reject: (err: unknown) => void;
}
interface PendingPrune {
  cutoffS: number;
  resolve: (spans: number) => void;
  reject: (err: unknown) => void;
}
interface PendingSeal {
  upTo: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class DuckDbTraceStore implements TraceStore {
  readonly engine = 'duckdb' as const;
  private readonly instance: DuckDBInstance;
  private readonly writer: DuckDBConnection;
  private readonly sealAgeMs: number;
  private readonly dictionary: Dictionary;
  private readonly notice: (message: string) => void;
  private readonly timer: NodeJS.Timeout | null;
  private appends: PendingAppend[] = [];
  private seals: PendingSeal[] = [];
  private prunes: PendingPrune[] = [];
  private writing: Promise<void> | null = null;
  /** Highest committed sequence number, and the highest one sealed. */
  private committedSeq: number;
  private sealedSeq: number;
  /** When each append committed, for the seal age: ascending seq. */
  private commits: { seq: number; at: number }[] = [];
  /** skill_keys as far as this process has read it: `${org}\u0000${skill}` -> key. */
  private readonly skillKeys = new Map<string, number>();
  private maxSkillKey = 0;
  /** When the oldest unanswered seal request was made, or the last seal step ended. */
  private sealWaitingSince = 0;
  /** Where the seal that is under way began (progress notices of long seals). */
  private sealFrom = 0;
  private closed = false;
  /** Queries in flight (settled promises) and their connections: close interrupts and waits for them. */
  private readonly inflight = new Set<Promise<void>>();
  private readonly active = new Set<DuckDBConnection>();

  private constructor(
    instance: DuckDBInstance,
    writer: DuckDBConnection,
    dictionary: Dictionary,
    seqs: { committed: number; sealed: number },
    options: DuckDbTraceOptions,
  ) {
    this.instance = instance;
    this.writer = writer;
    this.dictionary = dictionary;
    this.committedSeq = seqs.committed;
    this.sealedSeq = seqs.sealed;
    this.sealAgeMs = options.sealAgeMs ?? 10_000;
    this.notice = options.onNotice ?? (() => undefined);
    this.timer = sealInBackground(
      options.sealEveryMs ?? 5_000,
      () => this.sealAged(),
      this.notice,
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
    const writer = await instance.connect();
    await migrate(writer, options.onNotice);
    const [row] = (
      await writer.runAndReadAll(
        'SELECT (SELECT COALESCE(max(seq), 0) FROM spans) AS committed, (SELECT seq FROM sealed) AS sealed',
      )
    ).getRowObjectsJS();
    const seqs = { committed: Number(row?.committed ?? 0), sealed: Number(row?.sealed ?? 0) };
    const store = new DuckDbTraceStore(
      instance,
      writer,
      await Dictionary.load(writer, dictionaryValues),
      seqs,
      options,
    );
    await store.readSkillKeys();
    // Whatever an earlier process stored (or a migration converted) is sealed before the first query.
    await store.seal();
    return store;
  }

  private live(): void {
    if (this.closed) throw new TraceStoreUnavailableError();
  }

  async ping(): Promise<void> {
    this.live();
    await this.writer.run('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    // Closing the instance under a running query crashes the process (a native abort), so the
    // queries are interrupted and waited for first.
    for (const conn of this.active) conn.interrupt();
    await Promise.all(this.inflight);
    await this.writing;
    this.writer.closeSync();
    this.instance.closeSync();
  }

  /** A fresh connection to the same database, for tools that run SQL directly (benchmarks). */
  async connect(): Promise<DuckDBConnection> {
    this.live();
    return this.instance.connect();
  }

  async countSpans(): Promise<number> {
    this.live();
    const rows = (await this.writer.runAndReadAll('SELECT COUNT(*) AS n FROM spans')).getRowObjectsJS();
    return Number(rows[0]?.n ?? 0);
  }

  /** The database file and its WAL (store/stored-bytes.ts), the file as the engine names it. */
  async storedBytes(): Promise<StoredBytes> {
    this.live();
    const sql = 'SELECT path FROM duckdb_databases() WHERE database_name = current_database()';
    const [row] = (await this.writer.runAndReadAll(sql)).getRowObjectsJS();
    return databaseFileBytes(typeof row?.path === 'string' ? row.path : null, (file) => `${file}.wal`);
  }

  /**
   * Resolves once the rows are committed; concurrent calls share one transaction. A batch that
   * cannot be stored is refused here, alone, rather than failing the batches it would be grouped with.
   */
  insertColumns(spans: SpanColumns): Promise<void> {
    return this.insertSpans(toSpanRows(spans));
  }

  insertSpans(rows: readonly SpanRow[]): Promise<void> {
    this.live();
    for (const r of rows) {
      const why = unstorable(r);
      if (why !== null) return Promise.reject(new Error(why));
    }
    return this.enqueue(rows, []);
  }

  /** Stored with the next group of appends (one transaction). */
  insertMetricPoints(points: readonly MetricPointRow[]): Promise<void> {
    this.live();
    for (const p of points) {
      const why = unstorablePoint(p);
      if (why !== null) return Promise.reject(new Error(why));
    }
    return this.enqueue([], points);
  }

  private enqueue(rows: readonly SpanRow[], points: readonly MetricPointRow[]): Promise<void> {
    if (rows.length === 0 && points.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.appends.push({ rows, points, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** Retention: on the writer, between appends and seal steps (pruning.ts). */
  pruneBefore(cutoffS: number): Promise<number> {
    this.live();
    if (!Number.isSafeInteger(cutoffS)) return Promise.reject(new Error(`cutoffS must be an integer, got ${cutoffS}`));
    return new Promise((resolve, reject) => {
      this.prunes.push({ cutoffS, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /** Seals every span committed so far (tools and tests; the timer seals aged spans by itself). */
  seal(): Promise<void> {
    this.live();
    return this.sealUpTo(this.committedSeq);
  }

  private sealAged(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const cutoff = Date.now() - this.sealAgeMs;
    let upTo = this.sealedSeq;
    for (const c of this.commits) if (c.at <= cutoff) upTo = c.seq;
    return this.sealUpTo(upTo);
  }

  private sealUpTo(upTo: number): Promise<void> {
    if (upTo <= this.sealedSeq) return Promise.resolve();
    if (this.seals.length === 0) {
      this.sealWaitingSince = Date.now();
      this.sealFrom = this.sealedSeq;
    }
    return new Promise((resolve, reject) => {
      this.seals.push({ upTo, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /**
   * The writer. Appends carry request latency and go first, but a wanted seal gets a turn at least
   * every SEAL_TURN_MS even under constant ingestion, one step at a time, so neither starves.
   */
  private async drain(): Promise<void> {
    for (;;) {
      const sealTurn =
        this.seals.length > 0 && (this.appends.length === 0 || Date.now() - this.sealWaitingSince >= SEAL_TURN_MS);
      if (this.prunes.length > 0) {
        const p = this.prunes.shift() as PendingPrune;
        await pruneBefore(this.writer, p.cutoffS).then(p.resolve, p.reject);
      } else if (sealTurn) {
        await this.sealStep();
      } else if (this.appends.length > 0) {
        const group = this.appends.splice(0);
        await this.append(
          group.flatMap((g) => g.rows),
          group.flatMap((g) => g.points),
        ).then(
          () => group.forEach((g) => g.resolve()),
          (err: unknown) => group.forEach((g) => g.reject(err)),
        );
      } else {
        // Cleared in the same synchronous step as the emptiness checks: work queued after them
        // starts a new drain instead of waiting for one that has ended.
        this.writing = null;
        return;
      }
    }
  }

  /**
   * Seals at most SEAL_STEP spans towards the highest wanted target: memory stays bounded and each
   * step is one sorted run. Answers the waiters whose target is reached; a failure answers them all
   * (the timer asks again later).
   */
  private async sealStep(): Promise<void> {
    const target = Math.max(...this.seals.map((s) => s.upTo));
    const to = Math.min(target, this.sealedSeq + SEAL_STEP);
    try {
      await seal(this.writer, this.sealedSeq, to);
    } catch (err) {
      this.seals.splice(0).forEach((s) => s.reject(err));
      return;
    }
    this.sealedSeq = to;
    this.commits = this.commits.filter((c) => c.seq > to);
    await this.readSkillKeys();
    if (target - this.sealFrom > SEAL_STEP) {
      this.notice(
        `sealed ${(to - this.sealFrom).toLocaleString('en-US')} of ${(target - this.sealFrom).toLocaleString('en-US')} spans`,
      );
    }
    const done = this.seals.filter((s) => s.upTo <= to);
    this.seals = this.seals.filter((s) => s.upTo > to);
    done.forEach((s) => s.resolve());
    this.sealWaitingSince = Date.now();
  }

  private async readSkillKeys(): Promise<void> {
    const rows = (
      await this.writer.runAndReadAll('SELECT org_id, skill, key FROM skill_keys WHERE key > $1', [this.maxSkillKey])
    ).getRowObjectsJS();
    for (const r of rows) {
      const key = Number(r.key);
      this.skillKeys.set(`${sqlText(r.org_id)}\u0000${sqlText(r.skill)}`, key);
      this.maxSkillKey = Math.max(this.maxSkillKey, key);
    }
  }

  private async append(rows: readonly SpanRow[], points: readonly MetricPointRow[]): Promise<void> {
    await appendSpans(this.writer, this.dictionary, rows, this.committedSeq + 1, points);
    if (rows.length === 0) return;
    this.committedSeq += rows.length;
    this.commits.push({ seq: this.committedSeq, at: Date.now() });
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
    const key = this.skillKeys.get(`${query.orgId}\u0000${query.skill}`);
    const dimensionCodes: DimensionCodes = {
      encode: (value) => codes.get(String(value)) ?? NO_CODE,
      sortKey: (column) => `(SELECT value FROM dim_values WHERE id = ${column})`,
    };
    const source = {
      ...skillRows(key, this.committedSeq > this.sealedSeq),
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
        return tool === undefined || server === undefined ? [] : [{ group: t.group, tool, server }];
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
