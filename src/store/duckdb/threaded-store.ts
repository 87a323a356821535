/**
 * The embedded trace store as the service uses it: the DuckDB engine (trace-store.ts) in its own
 * worker thread (trace-worker.ts), behind the TraceStore port. Handing a span over costs ~2 µs
 * of structured cloning on the event loop instead of ~12 µs of appending on it. A deadline that
 * aborts a query cancels it in the worker; once closed, or if the worker dies, every call fails
 * with TraceStoreUnavailableError and the rest of the service keeps answering.
 */
import { Worker } from 'node:worker_threads';
import type { CompiledAggregate } from '../stats/compile.ts';
import {
  QueryCancelledError,
  TraceStoreUnavailableError,
  toSpanColumns,
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
import type { StoredBytes } from '../stored-bytes.ts';
import type { AgentNameRequest } from '../agent-names.ts';
import type { EvaluationRow } from '../evaluation-row.ts';
import type { EvaluationFactsPage, EvaluationFactsQuery, SubjectFactsPage, SubjectFactsQuery } from '../facts-port.ts';
import { SettledWrites } from '../watermark.ts';
import { KnownValues } from './known-values.ts';
import type { DuckDbTraceOptions } from './trace-store.ts';
import type { WorkerInit, WorkerReply, WorkerRequest } from './trace-worker.ts';

type Request = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

function toError(reply: { name: string; message: string }): Error {
  if (reply.name === 'QueryCancelledError') return new QueryCancelledError();
  if (reply.name === 'TraceStoreUnavailableError') return new TraceStoreUnavailableError(reply.message);
  const err = new Error(reply.message);
  err.name = reply.name;
  return err;
}

export class ThreadedTraceStore implements TraceStore {
  readonly engine = 'duckdb' as const;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private down: TraceStoreUnavailableError | null = null;
  private readonly writes = new SettledWrites();
  /** The dictionary's values, kept by the engine's thread: tells a server no span names without asking it. */
  private readonly known: KnownValues;

  private constructor(worker: Worker, notice: (message: string) => void, known: KnownValues) {
    this.worker = worker;
    this.known = known;
    worker.on('message', (m: WorkerReply) => {
      if ('notice' in m) {
        notice(m.notice);
        return;
      }
      const waiter = this.pending.get(m.id);
      if (waiter === undefined) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (m.ok) waiter.resolve(m.value);
      else waiter.reject(toError(m));
    });
    const fail = (why: string) => {
      this.down ??= new TraceStoreUnavailableError(why);
      for (const w of this.pending.values()) w.reject(this.down);
      this.pending.clear();
    };
    worker.on('error', (err: Error) => fail(`the trace engine failed: ${err.message}`));
    worker.on('exit', () => fail('the trace engine has stopped'));
    // The engine's thread keeps the process alive only while a call waits for its answer.
    worker.unref();
  }

  /** `options.onNotice` (default: a line on stderr) hears of migrations, long seals and seal failures. */
  static async open(file: string, options: DuckDbTraceOptions = {}): Promise<ThreadedTraceStore> {
    const { onNotice, ...engine } = options;
    const notice = onNotice ?? ((message: string) => process.stderr.write(`trace store: ${message}\n`));
    const known = KnownValues.create();
    const worker = new Worker(new URL('./trace-worker.ts', import.meta.url), {
      workerData: { file, options: { ...engine, knownValues: known.buffer } } satisfies WorkerInit,
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: WorkerReply) => {
        if ('notice' in m) {
          notice(m.notice);
          return;
        }
        worker.off('message', onMessage);
        if (m.ok) resolve();
        else reject(toError(m));
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.once('exit', (code) =>
        reject(new TraceStoreUnavailableError(`the trace engine exited (code ${code}) while opening`)),
      );
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    return new ThreadedTraceStore(worker, notice, known);
  }

  /** Sends a request under a fresh id, or under `id` when the caller took one to refer to the call. */
  private call<T>(request: Request, id = this.nextId++): Promise<T> {
    if (this.down !== null) return Promise.reject(this.down);
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.ref();
      this.worker.postMessage({ ...request, id });
    });
  }

  ping(): Promise<void> {
    return this.call({ op: 'ping' });
  }

  async close(): Promise<void> {
    if (this.down !== null) return;
    await this.call({ op: 'close' }).catch(() => undefined);
    this.down = new TraceStoreUnavailableError();
    await this.worker.terminate();
  }

  insertSpans(rows: readonly SpanRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    return this.insertColumns(toSpanColumns(rows), signal);
  }

  /** Columns cross to the engine's thread for a fraction of the event loop's time that rows take. */
  insertColumns(spans: SpanColumns, signal?: AbortSignal): Promise<InsertOutcome> {
    return this.writes.after(this.withdrawable({ op: 'insert', spans }, signal));
  }

  insertMetricPoints(points: readonly MetricPointRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    return this.writes.after(this.withdrawable({ op: 'insertPoints', points: [...points] }, signal));
  }

  insertEvaluations(evaluations: readonly EvaluationRow[], signal?: AbortSignal): Promise<InsertOutcome> {
    return this.writes.after(this.withdrawable({ op: 'insertEvaluations', evaluations: [...evaluations] }, signal));
  }

  async watermark(): Promise<string> {
    if (this.down !== null) throw this.down;
    return this.writes.mark;
  }

  /**
   * A write that an abort of `signal` withdraws if the engine has not taken it up yet. Unlike a
   * query, the call waits for the engine's word on it: committed (its outcome) or withdrawn
   * (QueryCancelledError), so the caller never answers an error for rows that were stored.
   */
  private async withdrawable<T>(request: Request, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw new QueryCancelledError();
    const id = this.nextId++;
    const onAbort = () => void this.call({ op: 'cancel', target: id }).catch(() => undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.call<T>(request, id);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  admitAgentNames(request: AgentNameRequest, signal?: AbortSignal): Promise<boolean[]> {
    if (signal?.aborted) return Promise.reject(new QueryCancelledError());
    return this.call({ op: 'admitAgentNames', request });
  }

  pruneBefore(cutoffS: number): Promise<number> {
    return this.writes.after(this.call({ op: 'prune', cutoffS }));
  }

  countSpans(): Promise<number> {
    return this.call({ op: 'count' });
  }

  storedBytes(): Promise<StoredBytes> {
    return this.call({ op: 'storedBytes' });
  }

  /** On abort the query is cancelled in the engine and the call rejects at once, not when the engine answers. */
  aggregate(query: AggregateQuery, signal?: AbortSignal): Promise<AggregateRow[]> {
    return this.cancellable({ op: 'aggregate', query }, signal);
  }

  toolUsage(query: ToolUsageQuery, signal?: AbortSignal): Promise<ToolUsageRow[]> {
    return this.cancellable({ op: 'toolUsage', query }, signal);
  }

  /**
   * Asks the engine about the servers some stored span may name only: when none may (a page of
   * servers without telemetry), the answer is empty without a round trip to the engine's thread.
   */
  serverUsage(query: ServerUsageQuery, signal?: AbortSignal): Promise<ServerUsageRow[]> {
    const servers = query.servers.filter((s) => this.known.mayHold(s));
    if (servers.length > 0) return this.cancellable({ op: 'serverUsage', query: { ...query, servers } }, signal);
    if (this.down !== null) return Promise.reject(this.down);
    return signal?.aborted === true ? Promise.reject(new QueryCancelledError()) : Promise.resolve([]);
  }

  subjectFacts(query: SubjectFactsQuery, signal?: AbortSignal): Promise<SubjectFactsPage> {
    return this.cancellable({ op: 'subjectFacts', query }, signal);
  }

  evaluationFacts(query: EvaluationFactsQuery, signal?: AbortSignal): Promise<EvaluationFactsPage> {
    return this.cancellable({ op: 'evaluationFacts', query }, signal);
  }

  activeOrganizations(sinceS: number, limit: number): Promise<string[]> {
    return this.call({ op: 'activeOrganizations', sinceS, limit });
  }

  firstSpanS(orgId: string, sinceS: number): Promise<number | null> {
    return this.call({ op: 'firstSpanS', orgId, sinceS });
  }

  private async cancellable<T>(request: Request, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw new QueryCancelledError();
    const id = this.nextId++; // the query's own id, so that a cancel names it for sure
    let onAbort = (): void => undefined;
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => {
        void this.call({ op: 'cancel', target: id }).catch(() => undefined);
        reject(new QueryCancelledError());
      };
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await Promise.race([this.call<T>(request, id), aborted]);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Seals every span stored so far (tools and tests; the engine seals aged spans by itself). */
  seal(): Promise<void> {
    return this.call({ op: 'seal' });
  }

  /** The SQL `aggregate` would run for `query` now. */
  compile(query: AggregateQuery): Promise<CompiledAggregate> {
    return this.call({ op: 'compile', query });
  }

  /**
   * Runs SQL that `compile` returned and answers its row count, without decoding rows (benchmarks
   * compare the endpoint with it). Any other text is refused: nothing else can run this way.
   */
  runCompiled(compiled: CompiledAggregate): Promise<number> {
    return this.call({ op: 'runCompiled', compiled });
  }

  /** Runs one SELECT statement and answers its row count (benchmarks: SQL written by hand); nothing else runs. */
  runSelect(statement: CompiledAggregate): Promise<number> {
    return this.call({ op: 'runSelect', statement });
  }
}
