import { describe, expect, it } from 'vitest';
import { compare, median, schedule, summarize, verdict } from '../../bench/compare-stats.ts';

describe('bench:ingest --against arithmetic', () => {
  it('takes the middle value, or the mean of the two middle ones, whatever the order', () => {
    expect(median([47_762, 40_939, 62_846])).toBe(47_762);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(() => median([])).toThrow('the median of no values');
  });

  it('summarizes a side by its median and its spread (min and max)', () => {
    expect(summarize([41_829, 33_231, 42_896])).toEqual({ median: 41_829, min: 33_231, max: 42_896, runs: 3 });
  });

  it('compares by the ratio of the medians, B over A', () => {
    const c = compare([47_095, 62_846, 50_000], [40_939, 47_762, 45_000]);
    expect(c.a.median).toBe(50_000);
    expect(c.b.median).toBe(45_000);
    expect(c.ratio).toBeCloseTo(0.9, 10);
  });

  it("takes each round's pair ratio in run order, and none when the sides ran unequally", () => {
    const c = compare([10, 40, 20], [11, 30, 30]);
    expect(c.rounds?.runs).toBe(3);
    expect(c.rounds?.min).toBeCloseTo(0.75, 10);
    expect(c.rounds?.median).toBeCloseTo(1.1, 10);
    expect(c.rounds?.max).toBeCloseTo(1.5, 10);
    expect(compare([10, 20], [10]).rounds).toBeNull();
  });

  it('calls a difference within the noise when the spreads overlap, touching included', () => {
    expect(compare([10, 20, 30], [25, 40, 50]).overlap).toBe(true);
    expect(compare([10, 20, 30], [30, 40, 50]).overlap).toBe(true);
    expect(compare([25, 40, 50], [10, 20, 30]).overlap).toBe(true);
    expect(verdict(compare([10, 20, 30], [25, 40, 50]))).toBe('spreads overlap: within the noise');
  });

  it('says which side every run of B lies on when the spreads are apart', () => {
    const lower = compare([40, 50, 60], [10, 20, 30]);
    expect(lower.overlap).toBe(false);
    expect(verdict(lower)).toBe('spreads apart: every run of B below every run of A');
    expect(verdict(compare([10, 20, 30], [31, 40, 50]))).toBe('spreads apart: every run of B above every run of A');
  });

  it('does not call one run a side either way', () => {
    expect(verdict(compare([10], [50]))).toBe('one run a side: the noise is unknown');
  });

  it('orders the sides A B in odd rounds and B A in even ones, each kind back to back', () => {
    const order = schedule(3, ['protobuf', 'JSON']).map((r) => `${r.round}${r.kind}${r.side}`);
    expect(order).toEqual([
      '1protobufA',
      '1protobufB',
      '1JSONA',
      '1JSONB',
      '2protobufB',
      '2protobufA',
      '2JSONB',
      '2JSONA',
      '3protobufA',
      '3protobufB',
      '3JSONA',
      '3JSONB',
    ]);
  });

  it('runs every kind once per side per round', () => {
    const runs = schedule(4, ['protobuf', 'JSON', 'logs', 'gRPC']);
    expect(runs).toHaveLength(32);
    for (const kind of ['protobuf', 'JSON', 'logs', 'gRPC'])
      for (const side of ['A', 'B'])
        expect(runs.filter((r) => r.kind === kind && r.side === side).map((r) => r.round)).toEqual([1, 2, 3, 4]);
    expect(() => schedule(0, ['protobuf'])).toThrow('rounds must be a positive integer');
    expect(() => schedule(2.5, ['protobuf'])).toThrow('rounds must be a positive integer');
  });
});
