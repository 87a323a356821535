/**
 * What insight detection (src/insights) reads of the trace store: per span workspace and subject
 * (a skill, from the traces its invocations name; an agent, from its `agent` dimension), the
 * numbers of several time windows in one call, and the mean evaluation scores per evaluation name
 * of the same subjects. Each number is the one operation 1 answers for the same subject, range and
 * `workspace_id` (test/contract/subject-facts-contract.ts and evaluation-facts-contract.ts compare
 * them); the compiled SQL of both engines is store/stats/subject-facts.ts and evaluation-facts.ts.
 *
 * Bounded: a call answers the rows of at most `limit` subjects (a cursor pages over the rest), at
 * most SUBJECT_FACT_WINDOWS windows, and per row at most `topTools` tools and `topModels` models
 * (per workspace and subject at most `topNames` evaluation names); `only` and `except` name at most
 * SUBJECT_FACT_LIST subjects each.
 */

/** Windows one call may ask for. */
const SUBJECT_FACT_WINDOWS = 16;
/** Subjects one call may answer. */
const SUBJECT_FACT_LIMIT = 1000;
/** Tools and models kept per row when the query names no other bound (and the most it may name). */
export const SUBJECT_FACT_TOP = 10;
const TOP_MAX = 100;
/** Subjects `only` or `except` may name. */
export const SUBJECT_FACT_LIST = 10_000;

/**
 * Which subjects a call pages over: with `only`, those it names (none when it is empty); with
 * `except`, all but those it names. Detection reads an organization's registry agents first
 * (`only`), then the names as sent (`except` the same list).
 */
interface SubjectChoice {
  only?: readonly string[];
  except?: readonly string[];
}

export interface FactWindow {
  /** Unix seconds, [startS, endS). */
  startS: number;
  endS: number;
}

export interface SubjectFactsQuery extends SubjectChoice {
  orgId: string;
  subjectType: 'skill' | 'agent';
  windows: readonly FactWindow[];
  /** The first `limit` subjects after `after` (by Unicode code point) of those chosen that have spans in a window. */
  limit: number;
  after: string | null;
  /** Per row, the tools with the most erroring calls (then most calls); default SUBJECT_FACT_TOP. */
  topTools?: number;
  /** Per row, the models of the most cost; default SUBJECT_FACT_TOP. */
  topModels?: number;
}

/** The tool calls (tool_call spans) of one tool within a subject's traces. */
export interface ToolFacts {
  tool: string | null;
  mcp: string | null;
  calls: number;
  errors: number;
}

interface ModelFacts {
  model: string;
  cost: number;
}

/**
 * The spans of `subject`'s traces in `workspaceId` that start in window `window` (an index into
 * the query's windows), as operation 1 measures them with `workspace_id` set to that workspace.
 */
export interface SubjectFacts {
  window: number;
  workspaceId: string;
  subject: string;
  traces: number;
  sessions: number;
  activeUsers: number;
  invocations: number;
  /** Erroring skill invocations. */
  errors: number;
  tokens: number;
  cost: number;
  /** Nearest-rank percentiles of the skill invocations' durations; null without invocations. */
  latencyP50: number | null;
  latencyP90: number | null;
  latencyP99: number | null;
  tokensPerTrace: number | null;
  successRate: number | null;
  /** Most erroring first, then most calls, then by tool and server. */
  tools: ToolFacts[];
  /** Most cost first, then by model. */
  models: ModelFacts[];
}

export interface SubjectFactsPage {
  /** Ordered by subject (code point), workspace, window; a (workspace, subject, window) without spans is absent. */
  rows: SubjectFacts[];
  /** The subjects answered. */
  subjects: number;
  /** The last subject answered when there may be more (the `after` of the next call), else null. */
  next: string | null;
}

export interface SubjectFactsReader {
  /** Rejects when `signal` aborts (the query is cancelled), and on a query outside the bounds above. */
  subjectFacts(query: SubjectFactsQuery, signal?: AbortSignal): Promise<SubjectFactsPage>;
  /** The organizations with a skill or agent trace started at or after `sinceS`, by id, at most `limit`. */
  activeOrganizations(sinceS: number, limit: number): Promise<string[]>;
  /**
   * The start (Unix seconds) of the organization's first span, of any kind, started at or after
   * `sinceS`, or null when none is stored: where detection's steps may find something again after
   * a silence.
   */
  firstSpanS(orgId: string, sinceS: number): Promise<number | null>;
}

/** Evaluation names kept per (workspace, subject) when the query names no other bound. */
export const EVALUATION_FACT_NAMES = 20;

export interface EvaluationFactsQuery extends SubjectChoice {
  orgId: string;
  subjectType: 'skill' | 'agent';
  windows: readonly FactWindow[];
  /** The first `limit` subjects after `after` (by code point) of those chosen with a scored evaluation counted in a window. */
  limit: number;
  after: string | null;
  /**
   * Per (workspace, subject), the evaluation names with the most scores over all windows (then by
   * name, code point); default EVALUATION_FACT_NAMES, at most 100.
   */
  topNames?: number;
}

/**
 * The scored evaluations (`gen_ai.evaluation.score.value`) of one name counted for `subject` in
 * `workspaceId` and window `window`, as operation 1's `evaluation_score` counts them with
 * `workspace_id` set to that workspace and the range the window: an evaluation of that workspace,
 * its own time in the window, whose trace is one of the subject's traces with a span of that
 * workspace in the window.
 */
export interface EvaluationFacts {
  window: number;
  workspaceId: string;
  subject: string;
  evaluationName: string;
  /** The mean of the scores. */
  meanScore: number;
  samples: number;
}

export interface EvaluationFactsPage {
  /** Ordered by subject, workspace, evaluation name (code point), window; a name without scores in a window is absent there. */
  rows: EvaluationFacts[];
  subjects: number;
  /** The last subject answered when there may be more, else null (as SubjectFactsPage). */
  next: string | null;
}

export interface EvaluationFactsReader {
  /** Rejects when `signal` aborts, and on a query outside the bounds above. */
  evaluationFacts(query: EvaluationFactsQuery, signal?: AbortSignal): Promise<EvaluationFactsPage>;
}

const whole = (n: number, min: number, max: number) => Number.isSafeInteger(n) && n >= min && n <= max;

/** Throws on windows, a limit or subject lists outside the bounds. */
function checkPage(q: SubjectChoice & { windows: readonly FactWindow[]; limit: number }, what: string): void {
  if (q.windows.length === 0 || q.windows.length > SUBJECT_FACT_WINDOWS)
    throw new Error(`${what}: 1 to ${SUBJECT_FACT_WINDOWS} windows, got ${q.windows.length}`);
  for (const w of q.windows)
    if (!Number.isSafeInteger(w.startS) || !Number.isSafeInteger(w.endS) || w.endS <= w.startS)
      throw new Error(`${what}: a window is [start, end) of whole seconds, got [${w.startS}, ${w.endS})`);
  if (!whole(q.limit, 1, SUBJECT_FACT_LIMIT))
    throw new Error(`${what}: limit is 1 to ${SUBJECT_FACT_LIMIT}, got ${q.limit}`);
  for (const list of [q.only, q.except])
    if (list !== undefined && list.length > SUBJECT_FACT_LIST)
      throw new Error(`${what}: only and except name at most ${SUBJECT_FACT_LIST} subjects, got ${list.length}`);
}

/** Throws on a query outside the bounds (a programming error of the caller, not a request's). */
export function checkEvaluationFactsQuery(q: EvaluationFactsQuery): void {
  checkPage(q, 'evaluation facts');
  if (q.topNames !== undefined && !whole(q.topNames, 1, TOP_MAX))
    throw new Error(`evaluation facts: topNames is 1 to ${TOP_MAX}`);
}

/** Throws on a query outside the bounds (a programming error of the caller, not a request's). */
export function checkSubjectFactsQuery(q: SubjectFactsQuery): void {
  checkPage(q, 'subject facts');
  for (const top of [q.topTools, q.topModels])
    if (top !== undefined && !whole(top, 0, TOP_MAX)) throw new Error(`subject facts: top is 0 to ${TOP_MAX}`);
}
