/**
 * DuckDB's writer completing MCP calls at any scale: the pairs it makes of one call key's sides
 * (store/duckdb/call-sides.ts `pairsOf`) change what every client paired with every server changes,
 * for groups of sides in one trace or several, in any order, while their number stays linear in the
 * sides; and a request completing more calls than a function call takes arguments is stored.
 */
import { describe, expect, it } from 'vitest';
import { completed, identityKey, type CallSide } from '../../src/store/call-pairs.ts';
import { pairsOf, type CallPair } from '../../src/store/duckdb/call-sides.ts';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { spanRow } from '../fixtures/span-row.ts';

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
    return s / 2 ** 32;
  };
}

function side(n: number, trace: number, server: boolean): CallSide {
  const span = { org_id: 'o', trace_id: trace.toString(16).padStart(32, '0'), span_id: `s${n}`, start_s: n };
  return { key: 'k', day: 0, server, span };
}

/** What `completed` makes of `pairs`, each list sorted (the writer's statements take them as sets). */
function outcome(pairs: readonly CallPair[]) {
  const { superseded, served } = completed(pairs);
  return {
    superseded: superseded.map(identityKey).sort(),
    served: served.map((x) => `${identityKey(x.client)} <- ${identityKey(x.server)}`).sort(),
  };
}

/** `pairs` one per client and server span, as the writer keeps them (a Map: first place, last value). */
const once = (pairs: readonly CallPair[]) => [
  ...new Map(pairs.map((p) => [`${identityKey(p.client)}\n${identityKey(p.server)}`, p])).values(),
];

function everyPair(group: readonly CallSide[]) {
  return group
    .filter((c) => !c.server)
    .flatMap((c) => group.filter((s) => s.server).map((s) => ({ client: c.span, server: s.span })));
}

describe('pairsOf', () => {
  it('changes what every client paired with every server changes, whatever the traces and order', () => {
    const next = random(7);
    for (let round = 0; round < 500; round++) {
      const traces = 1 + Math.floor(next() * 4);
      const group = Array.from({ length: Math.floor(next() * 12) }, (_, n) =>
        side(n, Math.floor(next() * traces), next() < 0.5),
      );
      expect(outcome(once(pairsOf(group))), JSON.stringify(group)).toEqual(outcome(everyPair(group)));
    }
  });

  it('makes at most one pair per server and two per client, however many share the key', () => {
    // 1,000 clients and 1,000 servers in three traces: a million pairs of every client with every server.
    const group = Array.from({ length: 2000 }, (_, n) => side(n, n % 3, n % 2 === 0));
    const pairs = pairsOf(group);
    expect(pairs.length).toBeLessThanOrEqual(1000 + 2 * 1000);
    expect(outcome(once(pairs))).toEqual(outcome(everyPair(group)));
  });
});

describe('the writer completing more calls at once than a call has arguments', () => {
  it('stores a request of 130,000 servers answering one stored client', { timeout: 60_000 }, async () => {
    // OTLP_MAX_SPANS raised, or concurrent requests grouped into one append: their starts, passed
    // to Math.min as arguments, overflowed the stack (about 125,000 on the main thread).
    const store = await DuckDbTraceStore.open(':memory:', { sealEveryMs: 0 });
    try {
      const day = Date.UTC(2026, 9, 10) / 1000;
      const fields = { category: 'tool_call', tool: 'echo', mcp: 'srv', mcp_request: '["s","1"]' } as const;
      const client = spanRow(1, { ...fields, start_s: day, duration_ms: 1000, mcp_side: 'client' });
      const servers = Array.from({ length: 130_000 }, (_, i) =>
        spanRow(i + 2, { ...fields, start_s: day + (i % 600), mcp_side: 'server' }),
      );
      expect(await store.insertSpans([client])).toEqual({ stored: 1, duplicates: 0 });
      expect(await store.insertSpans(servers)).toEqual({ stored: 130_000, duplicates: 0 });
      // Every server is in another trace than the client: superseded; the client counts.
      const usage = {
        orgId: 'org-a',
        workspaceIds: ['ws-a-team'],
        sinceS: null,
        tools: [{ group: 0, tool: 'echo', server: 'srv' }],
      };
      expect((await store.toolUsage(usage)).map((r) => r.calls)).toEqual([1]);
    } finally {
      await store.close();
    }
  });
});
