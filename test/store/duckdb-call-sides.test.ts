/**
 * The pairs DuckDB's writer makes of one call key's sides (store/duckdb/call-sides.ts `pairsOf`):
 * what `completed` makes of them equals what it makes of every client paired with every server, for
 * groups of sides in one trace or several, in any order, while their number stays linear in the sides.
 */
import { describe, expect, it } from 'vitest';
import { completed, identityKey, type CallSide } from '../../src/store/call-pairs.ts';
import { pairsOf, type CallPair } from '../../src/store/duckdb/call-sides.ts';

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
