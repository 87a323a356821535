/**
 * Agent names as sent (`gen_ai.agent.name` naming no registry agent, otlp/ingest.ts) are admitted
 * per (organization, workspace, UTC day of the span's start), at most `cap` distinct names each
 * (DESIGN §12: a stream of distinct values must not grow what the service stores without bound).
 * A name admitted once stays admitted for that workspace and day; a new one is admitted while the
 * workspace and day hold fewer than `cap`, and is recorded before the answer. Each engine keeps
 * the names in `agent_names` (dropped with the spans by retention) and serializes the admissions
 * of a workspace and day (DuckDB: its one writer; PostgreSQL: an advisory lock), so the cap holds
 * whatever the replicas. Shared here: the port, the decision, and a bounded cache of names
 * admitted (they stay admitted), which answers most requests without the store. Names are compared
 * as stored: lone surrogates as U+FFFD (shared/well-formed.ts), so names differing only there are one.
 */
import { wellFormed } from '../shared/well-formed.ts';
import { QueryCancelledError } from './trace-port.ts';

export interface AgentNameUse {
  workspaceId: string;
  /** UTC day: the span's start (Unix seconds) divided by 86,400, rounded down. */
  day: number;
  name: string;
}

export interface AgentNameRequest {
  orgId: string;
  /** Distinct names a workspace and day may hold (0: none). */
  cap: number;
  uses: readonly AgentNameUse[];
}

export interface AgentNameAdmitter {
  /**
   * Whether each use (in order) may keep its name, as the module says; new names admitted are
   * recorded before the answer. Rejects on a request outside its bounds; `signal` aborted before
   * the store is asked rejects with QueryCancelledError.
   */
  admitAgentNames(request: AgentNameRequest, signal?: AbortSignal): Promise<boolean[]>;
}

/** The names one request may ask about (a request holds at most OTLP_MAX_SPANS spans). */
const MAX_USES = 1_000_000;
/** Names the cache of each engine holds (value, workspace, day and organization: ~200 bytes each). */
const CACHED_NAMES = 10_000;

/** One workspace and day of a request and the distinct names asked there, in the order first asked. */
export interface NameGroup {
  workspaceId: string;
  day: number;
  names: string[];
}

/** What an engine read of a workspace and day: how many names it holds, and which of the asked ones. */
export interface HeldNames {
  count: number;
  known: ReadonlySet<string>;
}

/** The groups of `uses`, ordered by workspace then day (the order locks are taken in); names in their stored form. */
export function groupsOf(uses: readonly AgentNameUse[]): NameGroup[] {
  // The names of each group as a Set (insertion order): a search of the array per use grew with
  // the square of a group's names.
  const groups = new Map<string, { workspaceId: string; day: number; names: Set<string> }>();
  for (const u of uses) {
    const k = JSON.stringify([u.workspaceId, u.day]);
    const g = groups.get(k) ?? { workspaceId: u.workspaceId, day: u.day, names: new Set<string>() };
    g.names.add(wellFormed(u.name));
    groups.set(k, g);
  }
  const order = (a: NameGroup, b: NameGroup) =>
    a.workspaceId < b.workspaceId ? -1 : a.workspaceId > b.workspaceId ? 1 : a.day - b.day;
  return [...groups.values()].map((g) => ({ ...g, names: [...g.names] })).sort(order);
}

/** The names of `group` admitted (those held, then new ones while fewer than `cap` are held), and the new ones to record. */
export function decide(group: NameGroup, held: HeldNames, cap: number): { admitted: string[]; added: string[] } {
  const admitted: string[] = [];
  const added: string[] = [];
  for (const name of group.names) {
    if (held.known.has(name)) admitted.push(name);
    else if (held.count + added.length < cap) {
      admitted.push(name);
      added.push(name);
    }
  }
  return { admitted, added };
}

/** A use's key in the cache and in an engine's answer: its name as stored. */
const keyOf = (orgId: string, u: AgentNameUse) => JSON.stringify([orgId, u.workspaceId, u.day, wellFormed(u.name)]);

function checkRequest(r: AgentNameRequest): void {
  if (!Number.isSafeInteger(r.cap) || r.cap < 0) throw new Error(`agent names: cap is a whole number, got ${r.cap}`);
  if (r.uses.length > MAX_USES) throw new Error(`agent names: at most ${MAX_USES} uses a request`);
  for (const u of r.uses)
    if (!Number.isSafeInteger(u.day)) throw new Error(`agent names: a day is a whole number, got ${u.day}`);
}

/**
 * An engine's admissions behind a cache of the names it admitted (least recently used evicted):
 * names admitted stay admitted, so a cached one needs no store; `admit` (the engine, one
 * transaction) decides the others and answers those it admitted.
 */
export class AdmittedNames {
  private readonly cached = new Map<string, true>();

  async admit(
    request: AgentNameRequest,
    admit: (uses: AgentNameUse[]) => Promise<AgentNameUse[]>,
    signal?: AbortSignal,
  ): Promise<boolean[]> {
    checkRequest(request);
    const { orgId, uses } = request;
    const known = uses.map((u) => this.touch(keyOf(orgId, u)));
    const asked = uses.filter((_, i) => !known[i]);
    if (asked.length === 0) return known;
    if (signal?.aborted) throw new QueryCancelledError();
    const admitted = new Set((await admit(asked)).map((u) => keyOf(orgId, u)));
    for (const k of admitted) this.remember(k);
    return uses.map((u, i) => known[i] === true || admitted.has(keyOf(orgId, u)));
  }

  private touch(key: string): boolean {
    if (!this.cached.delete(key)) return false;
    this.cached.set(key, true);
    return true;
  }

  private remember(key: string): void {
    this.cached.delete(key);
    this.cached.set(key, true);
    for (const oldest of this.cached.keys()) {
      if (this.cached.size <= CACHED_NAMES) break;
      this.cached.delete(oldest);
    }
  }
}
