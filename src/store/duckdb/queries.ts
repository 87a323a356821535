/**
 * The query side of the DuckDB trace engine (trace-store.ts holds the writes and the lifecycle).
 * Every query gets its own connection, so a deadline interrupts it alone. Statistics are compiled
 * (../stats/compile.ts) over the sealed rows of the skill (skill-rows.ts), or the spans of the
 * agent's traces (agent-rows.ts), with the dictionary's codes of the values they bind; result
 * codes are decoded back into values.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { compileAggregate, type CompiledAggregate } from '../stats/compile.ts';
import { toAggregateRows } from '../stats/decode.ts';
import { DUCKDB } from '../stats/dialect.ts';
import type { DimensionCodes } from '../stats/row-source.ts';
import { compileServerUsage, compileToolUsage, toServerUsageRows, toToolUsageRows } from '../stats/tool-usage.ts';
import {
  QueryCancelledError,
  TraceStoreUnavailableError,
  type AggregateQuery,
  type AggregateRow,
  type Dimension,
  type ServerUsageQuery,
  type ServerUsageRow,
  type ToolUsageQuery,
  type ToolUsageRow,
} from '../trace-port.ts';
import { NO_CODE, isEncoded, type Dictionary } from './dictionary.ts';
import { agentRows } from './agent-rows.ts';
import { skillRows } from './skill-rows.ts';
import { agentSubjectRows, skillSubjectRows } from './subject-rows.ts';
import {
  checkEvaluationFactsQuery,
  checkSubjectFactsQuery,
  type EvaluationFactsPage,
  type EvaluationFactsQuery,
  type SubjectFactsPage,
  type SubjectFactsQuery,
} from '../facts-port.ts';
import { compileEvaluationFacts, toEvaluationFacts } from '../stats/evaluation-facts.ts';
import { compileSubjectFacts, toSubjectFacts } from '../stats/subject-facts.ts';
import { sqlText } from '../sql-values.ts';
import type { TraceWriter } from './writer.ts';

/** What queries read of the writer: the skill's sealed key, and whether unsealed spans wait. */
type SealedState = Pick<TraceWriter, 'skillKey' | 'hasUnsealed'>;

export class TraceQueries {
  private readonly instance: DuckDBInstance;
  private readonly dictionary: Dictionary;
  private readonly sealed: SealedState;
  private closed = false;
  /** Queries in flight (settled promises) and their connections: close interrupts and waits for them. */
  private readonly inflight = new Set<Promise<void>>();
  private readonly active = new Set<DuckDBConnection>();

  constructor(instance: DuckDBInstance, dictionary: Dictionary, sealed: SealedState) {
    this.instance = instance;
    this.dictionary = dictionary;
    this.sealed = sealed;
  }

  /**
   * Refuses new queries, interrupts those in flight and waits for them: closing the instance under
   * a running query crashes the process (a native abort).
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const conn of this.active) conn.interrupt();
    await Promise.all(this.inflight);
  }

  /** The SQL `aggregate` runs for `query` now (benchmarks compare it with the endpoint). */
  async compile(query: AggregateQuery): Promise<CompiledAggregate> {
    return this.query(undefined, (conn) => this.compileOn(conn, query));
  }

  /**
   * Runs `work` on its own connection as a query that close waits for: the store's small reads
   * (ping, span count, file path) go here, never on the writer's connection, which close shuts
   * after the writer is idle whatever else still runs on it (a native crash).
   */
  run<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.query(undefined, work);
  }

  /**
   * Compiles on the query's connection: the codes of the values it binds (filters, onlyGroups)
   * come from the dictionary's cache or one lookup in dim_values; a value no span has gets NO_CODE.
   */
  private async compileOn(conn: DuckDBConnection, query: AggregateQuery): Promise<CompiledAggregate> {
    const { subject } = query;
    const values: string[] = 'agent' in subject ? [subject.agent] : [];
    for (const f of query.filters) if (isEncoded(f.key)) values.push(...f.values.map(String));
    for (const g of query.onlyGroups ?? []) {
      for (const d of query.groupBy) {
        const v = g[d];
        if (isEncoded(d) && v !== null && v !== undefined) values.push(String(v));
      }
    }
    const codes = values.length === 0 ? new Map<string, number>() : await this.dictionary.codesOf(conn, values);
    const dimensionCodes: DimensionCodes = {
      encode: (value) => codes.get(String(value)) ?? NO_CODE,
      sortKey: (column) => `(SELECT value FROM dim_values WHERE id = ${column})`,
    };
    const rows =
      'agent' in subject
        ? agentRows(dimensionCodes.encode(subject.agent))
        : skillRows(subject, this.sealed.skillKey(query.orgId, subject.skill), this.sealed.hasUnsealed);
    const source = {
      ...rows,
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

  /** Detection's facts (stats/subject-facts.ts) over every subject's rows (subject-rows.ts); codes decoded in the statement. */
  async subjectFacts(query: SubjectFactsQuery, signal?: AbortSignal): Promise<SubjectFactsPage> {
    checkSubjectFactsQuery(query);
    return this.query(signal, async (conn) => {
      const source = query.subjectType === 'skill' ? skillSubjectRows(this.sealed.hasUnsealed) : agentSubjectRows();
      const { sql, params } = compileSubjectFacts(query, source, DUCKDB);
      return toSubjectFacts((await conn.runAndReadAll(sql, params)).getRowObjectsJS(), query);
    });
  }

  /** Detection's evaluation scores (stats/evaluation-facts.ts) over the same rows as subjectFacts. */
  async evaluationFacts(query: EvaluationFactsQuery, signal?: AbortSignal): Promise<EvaluationFactsPage> {
    checkEvaluationFactsQuery(query);
    return this.query(signal, async (conn) => {
      const source = query.subjectType === 'skill' ? skillSubjectRows(this.sealed.hasUnsealed) : agentSubjectRows();
      const { sql, params } = compileEvaluationFacts(query, source, DUCKDB);
      return toEvaluationFacts((await conn.runAndReadAll(sql, params)).getRowObjectsJS(), query);
    });
  }

  /** From the mappings, far fewer rows than the spans. */
  async activeOrganizations(sinceS: number, limit: number): Promise<string[]> {
    return this.query(undefined, async (conn) => {
      const sql = `SELECT org_id FROM trace_skills WHERE start_s >= $1 UNION SELECT org_id FROM trace_agents WHERE start_s >= $1
ORDER BY org_id LIMIT $2`;
      return (await conn.runAndReadAll(sql, [sinceS, limit])).getRowObjectsJS().map((r) => sqlText(r.org_id));
    });
  }

  async firstSpanS(orgId: string, sinceS: number): Promise<number | null> {
    return this.query(undefined, async (conn) => {
      const sql = 'SELECT min(start_s) AS s FROM spans WHERE org_id = $1 AND start_s >= $2';
      const [row] = (await conn.runAndReadAll(sql, [orgId, sinceS])).getRowObjectsJS();
      return row?.s === null || row?.s === undefined ? null : Number(row.s);
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

  /** Over `spans`, with the servers bound as their dictionary codes (a server no span names has none). */
  async serverUsage(query: ServerUsageQuery, signal?: AbortSignal): Promise<ServerUsageRow[]> {
    return this.query(signal, async (conn) => {
      const codes =
        query.servers.length === 0 ? new Map<string, number>() : await this.dictionary.codesOf(conn, query.servers);
      const serverOf = new Map([...codes].map(([server, code]) => [code, server]));
      const compiled = compileServerUsage(query, [...serverOf.keys()], DUCKDB, 'INTEGER');
      if (compiled === null) return [];
      if (signal?.aborted) throw new QueryCancelledError();
      const rows = (await conn.runAndReadAll(compiled.sql, compiled.params)).getRowObjectsJS();
      return toServerUsageRows(rows, (code) => serverOf.get(Number(code)) as string);
    });
  }

  /**
   * Runs `work` on a fresh connection that an abort of `signal` interrupts. Every query, from its
   * connect to its connection's close, is in `inflight`: close waits for them all (closing the
   * instance under a running query or a pending connect aborts the process).
   */
  private query<T>(signal: AbortSignal | undefined, work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) throw new TraceStoreUnavailableError();
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
