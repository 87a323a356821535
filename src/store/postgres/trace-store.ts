/**
 * The server-mode trace engine: spans in PostgreSQL, the same statistics SQL as DuckDB in the
 * PostgreSQL dialect (store/stats-sql.ts), the same contract. A query whose signal aborts is
 * cancelled on the server (pg_cancel_backend of its connection).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { compileAggregate, spanSourceColumns, toAggregateRows, type RowSource } from '../stats-sql.ts';
import {
  QueryCancelledError,
  TraceStoreUnavailableError,
  toSpanRows,
  type AggregateQuery,
  type AggregateRow,
  type MetricPointRow,
  type SpanColumns,
  type SpanRow,
  type ToolUsageQuery,
  type ToolUsageRow,
  type TraceStore,
} from '../trace-port.ts';
import { isConnectionFailure } from './pool.ts';
import { sqlNumber } from '../sql-values.ts';
import { POSTGRES } from '../sql-dialect.ts';
import { compileToolUsage, toToolUsageRows } from '../tool-usage-sql.ts';

const ROWS_PER_CHUNK = 1000;
/** Each column of `spans` with the SpanRow value it stores, declared together so they cannot drift apart. */
type CopyValue = string | number | boolean | null;
const SPAN_VALUES: [string, (r: SpanRow) => CopyValue][] = [
  ['org_id', (r) => r.org_id],
  ['workspace_id', (r) => r.workspace_id],
  ['trace_id', (r) => r.trace_id],
  ['span_id', (r) => r.span_id],
  ['parent_span_id', (r) => r.parent_span_id],
  ['name', (r) => r.name],
  ['start_s', (r) => r.start_s],
  ['duration_ms', (r) => r.duration_ms],
  ['category', (r) => r.category],
  ['harness', (r) => r.harness],
  ['skill', (r) => r.skill],
  ['skill_version', (r) => r.skill_version],
  ['command', (r) => r.command],
  ['mcp', (r) => r.mcp],
  ['tool', (r) => r.tool],
  ['model', (r) => r.model],
  ['user_id', (r) => r.user],
  ['session_id', (r) => r.session],
  ['tokens', (r) => Math.round(r.tokens)],
  ['cost', (r) => r.cost],
  ['is_error', (r) => r.is_error],
];
const SPAN_COLUMNS = SPAN_VALUES.map(([column]) => column);
const spanValues = (r: SpanRow): CopyValue[] => SPAN_VALUES.map(([, value]) => value(r));

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value in COPY's text format: \N for null, t/f, numbers as JavaScript writes them (integers within
 * 2^53 have no exponent), text with backslash, tab, newline and carriage return escaped. */
function copyValue(v: string | number | boolean | null): string {
  if (v === null) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  return v.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c] as string);
}

/** The spans of the skill's traces: a semi-join with the trace -> skill mapping, probed by trace. */
export const skillRows: RowSource = {
  rescan: false,
  sql(q, where, param) {
    const org = param(q.orgId);
    const columns = spanSourceColumns('trace_id');
    const version = q.skillVersion === undefined ? '' : ` AND m.skill_version = ${param(q.skillVersion)}`;
    return `SELECT ${columns} FROM spans
WHERE org_id = ${org} AND ${where}
AND EXISTS (SELECT 1 FROM trace_skills m WHERE m.org_id = ${org} AND m.trace_id = spans.trace_id AND m.skill = ${param(q.skill)}${version})`;
  },
};

export class PostgresTraceStore implements TraceStore {
  readonly engine = 'postgres' as const;
  private readonly pool: pg.Pool;
  /** Rows inserted since the last ANALYZE, and the table size it saw. */
  private unanalyzed = 0;
  private analyzedRows = 0;
  private analyzing: Promise<void> | null = null;

  /** `rows`: the size of `spans` as the planner last estimated it. */
  constructor(pool: pg.Pool, rows = 0) {
    this.pool = pool;
    this.analyzedRows = rows;
  }

  /**
   * Refreshes the planner's statistics once the tables have grown by a tenth (at least 1,000
   * rows) since the last time, in the background: autovacuum does the same only after its next
   * wake-up, and a statistics query planned on an empty table's estimates runs a nested loop.
   */
  private analyzeAfterGrowth(inserted: number): void {
    this.unanalyzed += inserted;
    if (this.analyzing !== null || this.unanalyzed < Math.max(1000, this.analyzedRows / 10)) return;
    const rows = this.analyzedRows + this.unanalyzed;
    this.unanalyzed = 0;
    this.analyzing = this.pool
      .query('ANALYZE spans, trace_skills')
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

  private unavailable(err: unknown): never {
    if (isConnectionFailure(err)) throw new TraceStoreUnavailableError('the trace database cannot be reached');
    throw err;
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1').catch((err: unknown) => this.unavailable(err));
  }

  /** Idempotent, as the registry store's. */
  async close(): Promise<void> {
    await this.analyzing;
    if (!this.pool.ended) await this.pool.end();
  }

  async countSpans(): Promise<number> {
    const res = await this.pool
      .query<{ n: string }>('SELECT COUNT(*)::bigint AS n FROM spans')
      .catch((err: unknown) => this.unavailable(err));
    return sqlNumber(res.rows[0]?.n);
  }

  /** Runs `work` in one transaction on one connection; a failure rolls it back. */
  private async inTransaction(work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect().catch((err: unknown) => this.unavailable(err));
    try {
      await client.query('BEGIN');
      await work(client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      this.unavailable(err);
    } finally {
      client.release();
    }
  }

  /**
   * Copies `rows` into `table` (COPY FROM STDIN, text format), ROWS_PER_CHUNK rows per chunk of
   * text: a fraction of the server's work of multi-row INSERTs with one parameter per value.
   */
  private static async copyRows<T>(
    client: pg.PoolClient,
    table: string,
    columns: string[],
    rows: readonly T[],
    values: (row: T) => CopyValue[],
  ): Promise<void> {
    if (rows.length === 0) return;
    function* chunks(): Generator<string> {
      for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) {
        let text = '';
        for (const row of rows.slice(i, i + ROWS_PER_CHUNK)) text += `${values(row).map(copyValue).join('\t')}\n`;
        yield text;
      }
    }
    await pipeline(Readable.from(chunks()), client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`)));
  }

  async insertSpans(rows: readonly SpanRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.inTransaction(async (client) => {
      await PostgresTraceStore.copyRows(client, 'spans', SPAN_COLUMNS, rows, spanValues);
      const skills = new Map<string, SpanRow>();
      for (const r of rows)
        if (r.category === 'skill_invocation' && r.skill !== null)
          skills.set(`${r.trace_id}\u0000${r.skill}\u0000${r.skill_version}`, r);
      await PostgresTraceStore.copyRows(
        client,
        'trace_skills',
        ['org_id', 'skill', 'skill_version', 'trace_id', 'start_s'],
        [...skills.values()],
        (r) => [r.org_id, r.skill, r.skill_version, r.trace_id, r.start_s],
      );
    });
    this.analyzeAfterGrowth(rows.length);
  }

  insertColumns(spans: SpanColumns): Promise<void> {
    return this.insertSpans(toSpanRows(spans));
  }

  async insertMetricPoints(points: readonly MetricPointRow[]): Promise<void> {
    if (points.length === 0) return;
    await this.inTransaction((client) =>
      PostgresTraceStore.copyRows(
        client,
        'metric_points',
        ['org_id', 'workspace_id', 'session_id', 'metric', 'time_s', 'value'],
        points,
        (p) => [p.org_id, p.workspace_id, p.session, p.metric, p.time_s, p.value],
      ),
    );
  }

  /**
   * Retention, by one replica at a time (a transaction-scoped advisory lock; another replica that
   * finds it taken answers 0 and leaves the work to the holder), without the request statement
   * timeout. A trace's mappings stay while any of its spans does.
   */
  async pruneBefore(cutoffS: number): Promise<number> {
    let deleted = 0;
    await this.inTransaction(async (client) => {
      await client.query('SET LOCAL statement_timeout = 0');
      const lock = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_xact_lock(hashtext('gateway.trace_retention')) AS ok",
      );
      if (lock.rows[0]?.ok !== true) return;
      deleted = (await client.query('DELETE FROM spans WHERE start_s < $1', [cutoffS])).rowCount ?? 0;
      await client.query(
        `DELETE FROM trace_skills t WHERE t.start_s < $1
        AND NOT EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = t.trace_id AND s.org_id = t.org_id)`,
        [cutoffS],
      );
      await client.query('DELETE FROM metric_points WHERE time_s < $1', [cutoffS]);
    });
    return deleted;
  }

  async aggregate(query: AggregateQuery, signal?: AbortSignal): Promise<AggregateRow[]> {
    const { sql, params } = compileAggregate(query, skillRows, POSTGRES);
    return toAggregateRows(await this.run(sql, params, signal), query);
  }

  async toolUsage(query: ToolUsageQuery, signal?: AbortSignal): Promise<ToolUsageRow[]> {
    const compiled = compileToolUsage(query, query.tools, POSTGRES, 'TEXT');
    if (compiled === null) return [];
    return toToolUsageRows(await this.run(compiled.sql, compiled.params, signal));
  }

  /** Runs one statement, cancelled on the server (pg_cancel_backend) when `signal` aborts. */
  private async run(sql: string, params: unknown[], signal?: AbortSignal): Promise<Record<string, unknown>[]> {
    if (signal?.aborted) throw new QueryCancelledError();
    const client = await this.pool.connect().catch((err: unknown) => this.unavailable(err));
    const pid = (client as unknown as { processID?: number }).processID;
    const onAbort = () => {
      if (pid !== undefined) void this.pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return (await client.query(sql, params)).rows as Record<string, unknown>[];
    } catch (err) {
      if (signal?.aborted) throw new QueryCancelledError();
      return this.unavailable(err);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      client.release();
    }
  }
}
