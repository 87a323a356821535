/**
 * One MCP call, one tool call. An MCP `tools/call` often arrives as two tool call spans: the
 * client's and the server's (separate processes, exporting separately, in any order, possibly
 * again). Both engines count the call once, with this rule:
 *
 * - two tool call spans of the same tool, organization and workspace are the two sides of one call
 *   when the server's span is a child of the client's (trace context propagated, MCP SEP-414: the
 *   client puts `traceparent` in `params._meta`), or when the client's span (kind CLIENT) and the
 *   server's (kind SERVER) name the same MCP request (`mcp.session.id` and `jsonrpc.request.id`);
 * - in one trace (propagated) the server's span counts: the client's is *superseded*, its stored
 *   category becomes SUPERSEDED_TOOL_CALL, and no statistic counts it as a tool call (it still
 *   counts as a span). The innermost span of a call counts, with its own duration and error;
 * - in two traces (not propagated) the client's span counts, since only its trace is the caller's
 *   (its skill, session and user), and takes the server's duration and error; the server's span
 *   is superseded.
 *
 * Both sides meet in the engines' `tool_call_pairs` table, one row per call key (a hash of
 * organization, workspace, the call and the tool) holding the identities of the client and server
 * spans seen. Every stored tool call span upserts its keys in the transaction that stores it;
 * whichever side comes second completes the row and applies the rule in that transaction (sealed
 * copies included). The key's uniqueness orders concurrent writers (PostgreSQL makes the second
 * wait for the first's commit), so the order of arrival and the batches never matter. A span sent
 * again is recognized as stored (DESIGN §12) and upserts nothing.
 */
import { hash } from 'node:crypto';
import { SPAN_DIMENSION_COLUMNS, SPAN_LATER_COLUMNS, SPAN_MEASURE_COLUMNS } from './stats/span-columns.ts';
import type { SpanRow } from './trace-port.ts';

/** The stored category of a superseded tool call span. */
export const SUPERSEDED_TOOL_CALL = 'superseded_tool_call';

/**
 * The columns of skill_spans in which the sealed copy of a superseded span equals every row no
 * statistic tells from it: skill_spans keeps no span id, and among equal rows clearing any one is
 * the same to every statistic. Duration and error are left out: no statistic reads them on a row
 * that is no invocation (and a client that takes its server's keeps its own in its sealed copies).
 */
export const SAME_SEALED = [
  'workspace_id',
  'trace_key',
  ...SPAN_DIMENSION_COLUMNS,
  ...SPAN_MEASURE_COLUMNS.filter((c) => c !== 'duration_ms' && c !== 'is_error'),
  ...SPAN_LATER_COLUMNS,
];

/** A stored span's identity (DESIGN §12). */
export interface SpanIdentity {
  org_id: string;
  trace_id: string;
  span_id: string;
  start_s: number;
}

/** What a write knows of a call: its key (32 hex digits) and its client and server spans (the first of each). */
export interface CallState {
  key: string;
  org_id: string;
  client: SpanIdentity | null;
  server: SpanIdentity | null;
  /** The latest start of the call's spans: retention forgets the call with them. */
  last_s: number;
}

/**
 * How far apart the clocks of a client and its server may be: a server's span pairs with a
 * client's when it starts within the client's span widened by this much on each side.
 */
const CLOCK_SKEW_S = 3600;
const DAY_S = 86_400;

/**
 * One side of a call as one span shows it, on one UTC day: a server side on the day its span starts,
 * a client side on every day its span, widened by CLOCK_SKEW_S, touches. The key is a hash of
 * organization, workspace, tool, call and day, so two sides share a key exactly when they are the
 * two sides of one call and the server's start lies on a day of the client's (widened) span: a
 * condition on the two spans alone, whatever the order they arrive in.
 */
export interface CallSide {
  /** 32 hex digits. */
  key: string;
  day: number;
  server: boolean;
  span: SpanIdentity;
}

/** MD5: a stable 128-bit key, fast; not a secret (a sender pairs only its own workspace's spans). */
const callKey = (row: SpanRow, call: readonly unknown[], day: number) =>
  hash('md5', JSON.stringify([row.org_id, row.workspace_id, row.tool, day, ...call]), 'hex');

/**
 * The sides the tool call spans of `rows` (spans a write stores, none of them stored before) take in
 * calls: each span is the client of its own call (as a parent) and serves its parent's, and an MCP
 * request's client or server side.
 */
export function callSides(rows: readonly SpanRow[]): CallSide[] {
  const out: CallSide[] = [];
  for (const row of rows) {
    if (row.category !== 'tool_call' || row.tool === null) continue;
    const { org_id, trace_id, span_id, start_s } = row;
    const span = { org_id, trace_id, span_id, start_s };
    const first = Math.floor((start_s - CLOCK_SKEW_S) / DAY_S);
    const last = Math.floor((start_s + row.duration_ms / 1000 + CLOCK_SKEW_S) / DAY_S);
    const side = (call: readonly unknown[], server: boolean) => {
      if (server)
        out.push({
          key: callKey(row, call, Math.floor(start_s / DAY_S)),
          day: Math.floor(start_s / DAY_S),
          server,
          span,
        });
      else for (let day = first; day <= last; day++) out.push({ key: callKey(row, call, day), day, server, span });
    };
    side(['span', trace_id, span_id], false);
    if (row.parent_span_id !== null) side(['span', trace_id, row.parent_span_id], true);
    if (row.mcp_request !== null && row.mcp_side !== null) side(['mcp', row.mcp_request], row.mcp_side === 'server');
  }
  return out;
}

/** The sides of `rows` one state per key (the first client and server of each), sorted by key. */
export function callStates(rows: readonly SpanRow[]): CallState[] {
  const states = new Map<string, CallState>();
  for (const { key, server, span } of callSides(rows)) {
    const state = states.get(key) ?? { key, org_id: span.org_id, client: null, server: null, last_s: span.start_s };
    if (server) state.server ??= span;
    else state.client ??= span;
    state.last_s = Math.max(state.last_s, span.start_s);
    states.set(key, state);
  }
  // Sorted: writers upsert keys in one order, so two that share keys wait rather than deadlock.
  return [...states.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** What completed calls change: spans no longer counted, and counted clients that take their server's duration and error. */
export interface Completed {
  superseded: SpanIdentity[];
  /** A client span in another trace than its server's: it counts, with the server's duration and error. */
  served: { client: SpanIdentity; server: SpanIdentity }[];
}

export const identityKey = (s: SpanIdentity): string => `${s.org_id}\n${s.trace_id}\n${s.span_id}\n${s.start_s}`;

/** What the calls of `states` that have both sides change (each span once). */
export function completed(states: readonly Pick<CallState, 'client' | 'server'>[]): Completed {
  const superseded = new Map<string, SpanIdentity>();
  const served = new Map<string, { client: SpanIdentity; server: SpanIdentity }>();
  for (const { client, server } of states) {
    if (client === null || server === null) continue;
    if (client.trace_id === server.trace_id) {
      superseded.set(identityKey(client), client);
    } else {
      superseded.set(identityKey(server), server);
      served.set(identityKey(client), { client, server });
    }
  }
  return { superseded: [...superseded.values()], served: [...served.values()] };
}
