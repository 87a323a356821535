/**
 * The DuckDB trace engine's own thread (started by threaded-store.ts). Appending a span to DuckDB
 * costs ~12 µs of synchronous JavaScript and native work (values into vectors, vectors into the
 * table); here it runs beside the service's event loop instead of on it. Requests arrive as
 * messages and are answered with the same id; errors travel as their name and message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StatementType } from '@duckdb/node-api';
import type { AggregateQuery, MetricPointRow, ServerUsageQuery, SpanColumns, ToolUsageQuery } from '../trace-port.ts';
import type { EvaluationFactsQuery, SubjectFactsQuery } from '../facts-port.ts';
import type { CompiledAggregate } from '../stats/compile.ts';
import type { EvaluationRow } from '../evaluation-row.ts';
import type { AgentNameRequest } from '../agent-names.ts';
import { DuckDbTraceStore, type DuckDbTraceOptions } from './trace-store.ts';
import { databaseFileBytes } from '../stored-bytes.ts';

export type WorkerRequest =
  | { id: number; op: 'insert'; spans: SpanColumns }
  | { id: number; op: 'insertPoints'; points: MetricPointRow[] }
  | { id: number; op: 'insertEvaluations'; evaluations: EvaluationRow[] }
  | { id: number; op: 'prune'; cutoffS: number }
  | { id: number; op: 'admitAgentNames'; request: AgentNameRequest }
  | { id: number; op: 'aggregate'; query: AggregateQuery }
  | { id: number; op: 'toolUsage'; query: ToolUsageQuery }
  | { id: number; op: 'serverUsage'; query: ServerUsageQuery }
  | { id: number; op: 'subjectFacts'; query: SubjectFactsQuery }
  | { id: number; op: 'evaluationFacts'; query: EvaluationFactsQuery }
  | { id: number; op: 'activeOrganizations'; sinceS: number; limit: number }
  | { id: number; op: 'firstSpanS'; orgId: string; sinceS: number }
  | { id: number; op: 'cancel'; target: number }
  | { id: number; op: 'compile'; query: AggregateQuery }
  | { id: number; op: 'runCompiled'; compiled: CompiledAggregate }
  | { id: number; op: 'runSelect'; statement: CompiledAggregate }
  | { id: number; op: 'count' | 'ping' | 'seal' | 'close' | 'storedBytes' };

export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; name: string; message: string }
  | { notice: string };

export interface WorkerInit {
  file: string;
  options: Omit<DuckDbTraceOptions, 'onNotice'>;
}

const port = parentPort;
if (port === null) throw new Error('trace-worker.ts runs as a worker thread');
const init = workerData as WorkerInit;
const running = new Map<number, AbortController>();
let store: DuckDbTraceStore;

/** Answers request `id` with the outcome of `work` (a synchronous throw included). */
function reply(id: number, work: () => unknown): void {
  Promise.resolve()
    .then(work)
    .then(
      (value) => port?.postMessage({ id, ok: true, value } satisfies WorkerReply),
      (err: unknown) => {
        const e = err instanceof Error ? err : new Error(String(err));
        port?.postMessage({ id, ok: false, name: e.name, message: e.message } satisfies WorkerReply);
      },
    );
}

/**
 * The SQL texts `compile` handed out lately. Only these run through `runCompiled`, so the benchmarks'
 * raw-SQL path runs nothing but the statistics compiler's own (read-only) SELECTs.
 */
const issued = new Set<string>();
const MAX_ISSUED = 64;

async function compile(query: AggregateQuery): Promise<CompiledAggregate> {
  const compiled = await store.compile(query);
  issued.delete(compiled.sql);
  issued.add(compiled.sql);
  for (const old of issued) {
    if (issued.size <= MAX_ISSUED) break;
    issued.delete(old);
  }
  return compiled;
}

/** Runs a query `compile` produced and returns its row count (benchmarks: the endpoint vs its SQL). */
async function runCompiled({ sql, params }: CompiledAggregate): Promise<number> {
  if (!issued.has(sql)) throw new Error('runCompiled runs only SQL that compile() produced');
  return store.withConnection(async (conn) => (await conn.runAndReadAll(sql, params)).currentRowCount);
}

/**
 * Runs one SELECT statement written by hand and returns its row count (benchmarks: the endpoint vs
 * the SQL an engineer would write over the same tables). Anything but exactly one SELECT is refused.
 */
async function runSelect({ sql, params }: CompiledAggregate): Promise<number> {
  return store.withConnection(async (conn) => {
    const statements = await conn.extractStatements(sql);
    const prepared = statements.count === 1 ? await statements.prepare(0) : null;
    if (prepared?.statementType !== StatementType.SELECT) throw new Error('runSelect runs one SELECT statement only');
    prepared.bind(params);
    return (await prepared.runAndReadAll()).currentRowCount;
  });
}

/** Runs a query (or a write still waiting its turn) that a later `cancel` naming `id` interrupts. */
async function cancellable<T>(id: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  running.set(id, controller);
  try {
    return await run(controller.signal);
  } finally {
    running.delete(id);
  }
}

function handle(m: WorkerRequest): void {
  switch (m.op) {
    case 'insert': {
      reply(m.id, () => cancellable(m.id, (signal) => store.insertColumns(m.spans, signal)));
      return;
    }
    case 'insertPoints': {
      reply(m.id, () => cancellable(m.id, (signal) => store.insertMetricPoints(m.points, signal)));
      return;
    }
    case 'insertEvaluations': {
      reply(m.id, () => cancellable(m.id, (signal) => store.insertEvaluations(m.evaluations, signal)));
      return;
    }
    case 'prune': {
      reply(m.id, () => store.pruneBefore(m.cutoffS));
      return;
    }
    case 'admitAgentNames': {
      reply(m.id, () => store.admitAgentNames(m.request));
      return;
    }
    case 'aggregate': {
      reply(m.id, () => cancellable(m.id, (signal) => store.aggregate(m.query, signal)));
      return;
    }
    case 'toolUsage': {
      reply(m.id, () => cancellable(m.id, (signal) => store.toolUsage(m.query, signal)));
      return;
    }
    case 'serverUsage': {
      reply(m.id, () => cancellable(m.id, (signal) => store.serverUsage(m.query, signal)));
      return;
    }
    case 'subjectFacts': {
      reply(m.id, () => cancellable(m.id, (signal) => store.subjectFacts(m.query, signal)));
      return;
    }
    case 'evaluationFacts': {
      reply(m.id, () => cancellable(m.id, (signal) => store.evaluationFacts(m.query, signal)));
      return;
    }
    case 'activeOrganizations': {
      reply(m.id, () => store.activeOrganizations(m.sinceS, m.limit));
      return;
    }
    case 'firstSpanS': {
      reply(m.id, () => store.firstSpanS(m.orgId, m.sinceS));
      return;
    }
    case 'cancel': {
      reply(m.id, () => running.get(m.target)?.abort());
      return;
    }
    case 'compile': {
      reply(m.id, () => compile(m.query));
      return;
    }
    case 'runCompiled': {
      reply(m.id, () => runCompiled(m.compiled));
      return;
    }
    case 'runSelect': {
      reply(m.id, () => runSelect(m.statement));
      return;
    }
    case 'count': {
      reply(m.id, () => store.countSpans());
      return;
    }
    case 'storedBytes': {
      // The file's size, not a query: a scrape never waits behind the engine's appends or seals.
      reply(m.id, () => databaseFileBytes(init.file, (file) => `${file}.wal`));
      return;
    }
    case 'ping': {
      reply(m.id, () => store.ping());
      return;
    }
    case 'seal': {
      reply(m.id, () => store.seal());
      return;
    }
    case 'close': {
      reply(m.id, () => store.close());
      return;
    }
  }
}

try {
  store = await DuckDbTraceStore.open(init.file, {
    ...init.options,
    onNotice: (notice) => port.postMessage({ notice } satisfies WorkerReply),
  });
  port.on('message', handle);
  port.postMessage({ id: 0, ok: true, value: 'open' } satisfies WorkerReply);
} catch (err) {
  const e = err instanceof Error ? err : new Error(String(err));
  port.postMessage({ id: 0, ok: false, name: e.name, message: e.message } satisfies WorkerReply);
}
