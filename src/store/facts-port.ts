/**
 * What insight detection (src/insights) reads of the trace store: per span workspace and subject
 * (a skill, from the traces its invocations name; an agent, from its `agent` dimension), the
 * numbers of several time windows in one call. Each number is the one operation 1 answers for the
 * same subject, range and `workspace_id` (test/contract/subject-facts-contract.ts compares them),
 * and the compiled SQL of both engines is store/stats/subject-facts.ts.
 *
 * Bounded: a call answers the rows of at most `limit` subjects (a cursor pages over the rest), at
 * most SUBJECT_FACT_WINDOWS windows, and per row at most `topTools` tools and `topModels` models.
 */

/** Windows one call may ask for. */
const SUBJECT_FACT_WINDOWS = 16;
/** Subjects one call may answer. */
const SUBJECT_FACT_LIMIT = 1000;
/** Tools and models kept per row when the query names no other bound (and the most it may name). */
export const SUBJECT_FACT_TOP = 10;
const TOP_MAX = 100;

export interface FactWindow {
  /** Unix seconds, [startS, endS). */
  startS: number;
  endS: number;
}

export interface SubjectFactsQuery {
  orgId: string;
  subjectType: 'skill' | 'agent';
  windows: readonly FactWindow[];
  /** The first `limit` subjects after `after` (by Unicode code point) that have spans in a window. */
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
}

/** Throws on a query outside the bounds (a programming error of the caller, not a request's). */
export function checkSubjectFactsQuery(q: SubjectFactsQuery): void {
  const whole = (n: number, min: number, max: number) => Number.isSafeInteger(n) && n >= min && n <= max;
  if (q.windows.length === 0 || q.windows.length > SUBJECT_FACT_WINDOWS)
    throw new Error(`subject facts: 1 to ${SUBJECT_FACT_WINDOWS} windows, got ${q.windows.length}`);
  for (const w of q.windows)
    if (!Number.isSafeInteger(w.startS) || !Number.isSafeInteger(w.endS) || w.endS <= w.startS)
      throw new Error(`subject facts: a window is [start, end) of whole seconds, got [${w.startS}, ${w.endS})`);
  if (!whole(q.limit, 1, SUBJECT_FACT_LIMIT))
    throw new Error(`subject facts: limit is 1 to ${SUBJECT_FACT_LIMIT}, got ${q.limit}`);
  for (const top of [q.topTools, q.topModels])
    if (top !== undefined && !whole(top, 0, TOP_MAX)) throw new Error(`subject facts: top is 0 to ${TOP_MAX}`);
}
