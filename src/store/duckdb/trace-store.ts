/**
 * The embedded trace engine: one DuckDB file. Spans are appended in start-time order (ingestion
 * is naturally time-ordered), so zone maps on `start_s` prune row groups of a time range; the
 * `trace_skills` table maps each trace to the skills it invokes, so a skill's traces are found
 * without scanning spans. Writes are serialised on one connection; every query gets its own
 * connection so a deadline can interrupt it alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BIGINT, BOOLEAN, DOUBLE, DuckDBDataChunk, DuckDBInstance, INTEGER, VARCHAR, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { QueryCancelledError, TraceStoreUnavailableError, type AggregateQuery, type AggregateRow, type SpanRow, type TraceStore } from '../trace-port.ts';
import { SOURCE_COLUMNS, compileAggregate, toAggregateRows, type CompiledAggregate, type RowSource } from '../stats-sql.ts';

const MIGRATIONS: [string, string][] = [
  ['001_spans', `
CREATE TABLE spans (
  org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, trace_id VARCHAR NOT NULL, span_id VARCHAR NOT NULL,
  parent_span_id VARCHAR, name VARCHAR, start_s BIGINT NOT NULL, duration_ms DOUBLE NOT NULL, category VARCHAR NOT NULL,
  harness VARCHAR, skill VARCHAR, skill_version INTEGER, command VARCHAR, mcp VARCHAR, tool VARCHAR, model VARCHAR,
  user_id VARCHAR, session_id VARCHAR, tokens BIGINT NOT NULL, cost DOUBLE NOT NULL, is_error BOOLEAN NOT NULL);
CREATE TABLE trace_skills (org_id VARCHAR NOT NULL, skill VARCHAR NOT NULL, skill_version INTEGER, trace_id VARCHAR NOT NULL, start_s BIGINT NOT NULL);`],
];

const CHUNK_ROWS = 2048;
/** Column types and extractors in the column order of `spans`. */
const SPAN_TYPES = [VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, BIGINT, DOUBLE, VARCHAR, VARCHAR, VARCHAR, INTEGER,
  VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, BIGINT, DOUBLE, BOOLEAN];
const SPAN_COLUMNS: ((r: SpanRow) => DuckDBValue)[] = [
  (r) => r.org_id, (r) => r.workspace_id, (r) => r.trace_id, (r) => r.span_id, (r) => r.parent_span_id, (r) => r.name,
  (r) => BigInt(r.start_s), (r) => r.duration_ms, (r) => r.category, (r) => r.harness, (r) => r.skill, (r) => r.skill_version,
  (r) => r.command, (r) => r.mcp, (r) => r.tool, (r) => r.model, (r) => r.user, (r) => r.session,
  (r) => BigInt(Math.round(r.tokens)), (r) => r.cost, (r) => r.is_error,
];

/** The spans of the skill's traces: a semi-join with the trace -> skill mapping. */
const skillRows: RowSource = {
  rescan: false,
  sql(q, where, param) {
    const org = param(q.orgId);
    const version = q.skillVersion === undefined ? '' : ` AND skill_version = ${param(q.skillVersion)}`;
    const columns = SOURCE_COLUMNS.map((c) => (c === 'trace_key' ? 'trace_id AS trace_key' : c)).join(', ');
    return `SELECT ${columns} FROM spans
  SEMI JOIN (SELECT trace_id FROM trace_skills WHERE org_id = ${org} AND skill = ${param(q.skill)}${version}) st USING (trace_id)
  WHERE org_id = ${org} AND ${where}`;
  },
};

export class DuckDbTraceStore implements TraceStore {
  readonly engine = 'duckdb' as const;
  private readonly instance: DuckDBInstance;
  private readonly writer: DuckDBConnection;
  private pending: { rows: readonly SpanRow[]; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;

  private constructor(instance: DuckDBInstance, writer: DuckDBConnection) {
    this.instance = instance;
    this.writer = writer;
  }

  static async open(file: string): Promise<DuckDbTraceStore> {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    const instance = await DuckDBInstance.create(file);
    const writer = await instance.connect();
    await writer.run('CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)');
    const done = new Set((await writer.runAndReadAll('SELECT name FROM schema_migrations')).getRowObjectsJS().map((r) => String(r.name)));
    for (const [name, sql] of MIGRATIONS) {
      if (done.has(name)) continue;
      await writer.run('BEGIN TRANSACTION');
      await writer.run(sql);
      await writer.run('INSERT INTO schema_migrations VALUES ($1, now())', [name]);
      await writer.run('COMMIT');
    }
    return new DuckDbTraceStore(instance, writer);
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
    await this.flushing;
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

  /**
   * Group commit: batches that arrive while a write is in progress are appended together in the
   * next transaction, and each caller resolves only once its rows are committed.
   */
  insertSpans(rows: readonly SpanRow[]): Promise<void> {
    this.live();
    return new Promise((resolve, reject) => {
      this.pending.push({ rows, resolve, reject });
      this.flushing ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending.splice(0);
      try {
        await this.append(group.flatMap((g) => g.rows));
        for (const g of group) g.resolve();
      } catch (err) {
        for (const g of group) g.reject(err);
      }
    }
    // Cleared in the same synchronous step as the final emptiness check: a batch queued after
    // it starts a new drain instead of waiting for one that has ended.
    this.flushing = null;
  }

  private async append(rows: readonly SpanRow[]): Promise<void> {
    if (rows.length === 0) return;
    const w = this.writer;
    await w.run('BEGIN TRANSACTION');
    try {
      // Column-wise: one DataChunk per 2,048 rows instead of one native call per value.
      const spans = await w.createAppender('spans');
      for (let i = 0; i < rows.length; i += CHUNK_ROWS) {
        const slice = rows.slice(i, i + CHUNK_ROWS);
        const chunk = DuckDBDataChunk.create(SPAN_TYPES, slice.length);
        chunk.setColumns(SPAN_COLUMNS.map((column) => slice.map(column)));
        spans.appendDataChunk(chunk);
      }
      spans.flushSync();
      spans.closeSync();
      const skills = new Map<string, SpanRow>();
      for (const r of rows) {
        if (r.category === 'skill_invocation' && r.skill !== null) skills.set(`${r.trace_id}\u0000${r.skill}\u0000${r.skill_version}`, r);
      }
      const map = await w.createAppender('trace_skills');
      for (const r of skills.values()) {
        map.appendVarchar(r.org_id); map.appendVarchar(r.skill as string);
        if (r.skill_version === null) map.appendNull(); else map.appendInteger(r.skill_version);
        map.appendVarchar(r.trace_id); map.appendBigInt(BigInt(r.start_s));
        map.endRow();
      }
      map.flushSync();
      map.closeSync();
      await w.run('COMMIT');
    } catch (err) {
      await w.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** The SQL `aggregate` runs for `query` (benchmarks compare it with the endpoint). */
  compile(query: AggregateQuery): CompiledAggregate {
    return compileAggregate(query, skillRows, 'duckdb');
  }

  async aggregate(query: AggregateQuery, signal?: AbortSignal): Promise<AggregateRow[]> {
    this.live();
    if (signal?.aborted) throw new QueryCancelledError();
    const { sql, params } = this.compile(query);
    const conn = await this.instance.connect();
    const onAbort = () => conn.interrupt();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const rows = (await conn.runAndReadAll(sql, params)).getRowObjectsJS();
      return toAggregateRows(rows, query);
    } catch (err) {
      if (signal?.aborted) throw new QueryCancelledError();
      if (this.closed) throw new TraceStoreUnavailableError();
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      conn.closeSync();
    }
  }
}
