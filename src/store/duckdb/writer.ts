/**
 * The DuckDB trace engine's one writer: a queue of appends, seal steps, retention runs and short
 * exclusive tasks (admissions of agent names: agent-names.ts), drained on one connection. Appends
 * of concurrent requests are committed together (group commit), every span gets the next sequence
 * number, and each skill invocation adds a trace -> skill mapping (append.ts). Sealing (sealing.ts) copies the spans of each skill's traces into `skill_spans` for
 * spans committed at least `sealAgeMs` ago; appends carry request latency and go first, but a wanted
 * seal gets a turn at least every SEAL_TURN_MS, one step of at most SEAL_STEP spans at a time.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { QueryCancelledError, type InsertOutcome, type MetricPointRow, type SpanRow } from '../trace-port.ts';
import type { EvaluationRow } from '../evaluation-row.ts';
import { sqlText } from '../sql-values.ts';
import { appendSpans } from './append.ts';
import { applyPairs } from './call-pairs.ts';
import { CallSides } from './call-sides.ts';
import type { Dictionary } from './dictionary.ts';
import { Identities } from './identities.ts';
import { pruneBefore } from './pruning.ts';
import { seal } from './sealing.ts';

const SEAL_STEP = 500_000;
const SEAL_TURN_MS = 1_000;

/** What one append stores: spans, harness metric points, evaluations (any may be empty). */
export interface AppendBatch {
  rows: readonly SpanRow[];
  points: readonly MetricPointRow[];
  evaluations: readonly EvaluationRow[];
}

interface PendingAppend extends AppendBatch {
  resolve: (outcome: InsertOutcome) => void;
  reject: (err: unknown) => void;
  /** Removes the abort listener (once the append leaves the queue). */
  release: () => void;
}
interface PendingPrune {
  cutoffS: number;
  resolve: (spans: number) => void;
  reject: (err: unknown) => void;
}
/** Work that needs the writer's connection to itself (an admission of agent names). */
interface PendingTask {
  run: (conn: DuckDBConnection) => Promise<void>;
}
interface PendingSeal {
  upTo: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface WriterOptions {
  /** Spans are sealed once committed this long ago. */
  sealAgeMs: number;
  /** Progress of long seals. */
  notice: (message: string) => void;
  /** Fingerprints held per table (day-identities.ts): at most this many of spans, of metric points, of evaluations. */
  identityMaxKeys: number;
}

export class TraceWriter {
  private readonly conn: DuckDBConnection;
  private readonly dictionary: Dictionary;
  private readonly sealAgeMs: number;
  private readonly notice: (message: string) => void;
  private readonly identities: Identities;
  /** The sides of MCP calls stored (call-sides.ts). */
  private readonly calls: CallSides;
  private appends: PendingAppend[] = [];
  private seals: PendingSeal[] = [];
  private prunes: PendingPrune[] = [];
  private tasks: PendingTask[] = [];
  private writing: Promise<void> | null = null;
  /** Highest committed sequence number, and the highest one sealed. */
  private committedSeq: number;
  private sealedSeq: number;
  /** When each append committed, for the seal age: ascending seq. */
  private commits: { seq: number; at: number }[] = [];
  /** skill_keys as far as this writer has read it: `${org}\u0000${skill}` -> key. */
  private readonly skillKeys = new Map<string, number>();
  private maxSkillKey = 0;
  /** When the oldest unanswered seal request was made, or the last seal step ended. */
  private sealWaitingSince = 0;
  /** Where the seal that is under way began (progress notices of long seals). */
  private sealFrom = 0;

  private constructor(
    conn: DuckDBConnection,
    dictionary: Dictionary,
    seqs: { committed: number; sealed: number },
    options: WriterOptions,
  ) {
    this.conn = conn;
    this.dictionary = dictionary;
    this.committedSeq = seqs.committed;
    this.sealedSeq = seqs.sealed;
    this.sealAgeMs = options.sealAgeMs;
    this.notice = options.notice;
    this.identities = new Identities(conn, options.identityMaxKeys);
    this.calls = new CallSides(conn, options.identityMaxKeys);
  }

  /** A writer on `conn` (migrated), continuing the sequence numbers and watermark stored there. */
  static async open(conn: DuckDBConnection, dictionary: Dictionary, options: WriterOptions): Promise<TraceWriter> {
    const [row] = (
      await conn.runAndReadAll(
        'SELECT (SELECT COALESCE(max(seq), 0) FROM spans) AS committed, (SELECT seq FROM sealed) AS sealed',
      )
    ).getRowObjectsJS();
    const seqs = { committed: Number(row?.committed ?? 0), sealed: Number(row?.sealed ?? 0) };
    const writer = new TraceWriter(conn, dictionary, seqs, options);
    await writer.readSkillKeys();
    return writer;
  }

  /** Whether spans wait to be sealed: statistics then also read the unsealed tails. */
  get hasUnsealed(): boolean {
    return this.committedSeq > this.sealedSeq;
  }

  /** The integer key sealing gave (organization, skill), if it has one yet. */
  skillKey(orgId: string, skill: string): number | undefined {
    return this.skillKeys.get(`${orgId}\u0000${skill}`);
  }

  /**
   * Resolves once the new rows, points and evaluations are committed (concurrent calls share one
   * transaction), with what was stored and what was left out as stored already. An abort of
   * `signal` while the append waits in the queue withdraws it (QueryCancelledError); once taken up
   * it is not withdrawn.
   */
  append(batch: AppendBatch, signal?: AbortSignal): Promise<InsertOutcome> {
    if (batch.rows.length + batch.points.length + batch.evaluations.length === 0)
      return Promise.resolve({ stored: 0, duplicates: 0 });
    if (signal?.aborted) return Promise.reject(new QueryCancelledError());
    return new Promise((resolve, reject) => {
      const pending: PendingAppend = { ...batch, resolve, reject, release: () => undefined };
      if (signal !== undefined) {
        const withdraw = () => {
          const at = this.appends.indexOf(pending);
          if (at < 0) return;
          this.appends.splice(at, 1);
          reject(new QueryCancelledError());
        };
        signal.addEventListener('abort', withdraw, { once: true });
        pending.release = () => signal.removeEventListener('abort', withdraw);
      }
      this.appends.push(pending);
      this.writing ??= this.drain();
    });
  }

  /** What the writer holds of the identities of spans, metric points and evaluations (day-identities.ts). */
  get identityStats(): Record<'spans' | 'points' | 'evaluations', Identities['spans']['stats']> {
    const { spans, points, evaluations } = this.identities;
    return { spans: spans.stats, points: points.stats, evaluations: evaluations.stats };
  }

  /** Retention: between appends and seal steps (pruning.ts). */
  prune(cutoffS: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.prunes.push({ cutoffS, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  /**
   * Runs `work` on the writer's connection between its appends and seal steps, in the turn of the
   * appends waiting, before them (it is short, and a request waits for it); its transaction is its own.
   */
  exclusive<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      this.tasks.push({ run: (conn) => work(conn).then(resolve, reject) });
      this.writing ??= this.drain();
    });
  }

  /** Seals every span committed so far. */
  sealAll(): Promise<void> {
    return this.sealUpTo(this.committedSeq);
  }

  /** Seals the spans committed at least `sealAgeMs` ago (the background timer). */
  sealAged(): Promise<void> {
    const cutoff = Date.now() - this.sealAgeMs;
    let upTo = this.sealedSeq;
    for (const c of this.commits) if (c.at <= cutoff) upTo = c.seq;
    return this.sealUpTo(upTo);
  }

  /** Resolves once everything queued so far is done (close waits for it). */
  async idle(): Promise<void> {
    await this.writing;
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
   * The writer. Appends and tasks carry request latency and go first (the tasks queued, then the
   * appends queued, in one turn, so neither starves the other), but a wanted seal gets a turn at
   * least every SEAL_TURN_MS even under constant ingestion, one step at a time, so none starves.
   */
  private async drain(): Promise<void> {
    for (;;) {
      const waiting = this.appends.length + this.tasks.length;
      const sealTurn = this.seals.length > 0 && (waiting === 0 || Date.now() - this.sealWaitingSince >= SEAL_TURN_MS);
      if (this.prunes.length > 0) {
        const p = this.prunes.shift() as PendingPrune;
        await pruneBefore(this.conn, p.cutoffS).then((spans) => {
          this.identities.forgetBefore(p.cutoffS);
          this.calls.forgetBefore(p.cutoffS);
          p.resolve(spans);
        }, p.reject);
      } else if (sealTurn) {
        await this.sealStep();
      } else if (waiting > 0) {
        for (const task of this.tasks.splice(0)) await task.run(this.conn);
        if (this.appends.length === 0) continue;
        const group = this.appends.splice(0);
        for (const g of group) g.release();
        await this.appendGroup(group).then(
          (outcomes) => group.forEach((g, i) => g.resolve(outcomes[i] as InsertOutcome)),
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
      await seal(this.conn, this.sealedSeq, to);
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
      await this.conn.runAndReadAll('SELECT org_id, skill, key FROM skill_keys WHERE key > $1', [this.maxSkillKey])
    ).getRowObjectsJS();
    for (const r of rows) {
      const key = Number(r.key);
      this.skillKeys.set(`${sqlText(r.org_id)}\u0000${sqlText(r.skill)}`, key);
      this.maxSkillKey = Math.max(this.maxSkillKey, key);
    }
  }

  /**
   * Appends the rows, points and evaluations of a group not stored already (identities.ts), in one
   * transaction, and answers each append's outcome in group order.
   */
  private async appendGroup(group: readonly PendingAppend[]): Promise<InsertOutcome[]> {
    const rows = group.flatMap((g) => g.rows);
    const points = group.flatMap((g) => g.points);
    const evaluations = group.flatMap((g) => g.evaluations);
    const check = await this.identities.spans.check(rows);
    const pointCheck = await this.identities.points.check(points);
    const evaluationCheck = await this.identities.evaluations.check(evaluations);
    const freshRows = check.fresh;
    const keptRows = rows.filter((_, i) => freshRows[i]);
    const extras = {
      points: points.filter((_, i) => pointCheck.fresh[i]),
      evaluations: evaluations.filter((_, i) => evaluationCheck.fresh[i]),
    };
    if (keptRows.length + extras.points.length + extras.evaluations.length > 0)
      await appendSpans(this.conn, this.dictionary, keptRows, this.committedSeq + 1, extras, async () =>
        applyPairs(this.conn, await this.calls.pair(keptRows), this.sealedSeq),
      );
    this.identities.spans.committed(rows, check);
    this.identities.points.committed(points, pointCheck);
    this.identities.evaluations.committed(evaluations, evaluationCheck);
    if (keptRows.length > 0) {
      this.committedSeq += keptRows.length;
      this.commits.push({ seq: this.committedSeq, at: Date.now() });
    }
    // Each append's rows of each kind, in group order: their verdicts are consecutive.
    const at = { rows: 0, points: 0, evaluations: 0 };
    const freshOf = { rows: freshRows, points: pointCheck.fresh, evaluations: evaluationCheck.fresh };
    return group.map((g) => {
      let stored = 0;
      let total = 0;
      for (const kind of ['rows', 'points', 'evaluations'] as const) {
        for (let end = at[kind] + g[kind].length; at[kind] < end; at[kind]++) if (freshOf[kind][at[kind]]) stored++;
        total += g[kind].length;
      }
      return { stored, duplicates: total - stored };
    });
  }
}
