/**
 * The arithmetic of `bench:ingest -- --against <commit>` (bench/ingest-compare.ts), kept apart so
 * that it is tested without running a benchmark: the order of the runs, and each side's median,
 * spread and the ratio of the medians.
 */

export type Side = 'A' | 'B';

export interface ScheduledRun<K> {
  /** 1-based. */
  round: number;
  kind: K;
  side: Side;
}

/**
 * Every kind once per side per round, the two sides of a kind back to back, in A B order in odd
 * rounds and B A in even ones (A B, B A, A B, …): a load that rises or falls through the comparison
 * weighs on both sides alike instead of always on the one that runs second.
 */
export function schedule<K>(rounds: number, kinds: readonly K[]): ScheduledRun<K>[] {
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('rounds must be a positive integer');
  const runs: ScheduledRun<K>[] = [];
  for (let round = 1; round <= rounds; round++) {
    const sides: Side[] = round % 2 === 1 ? ['A', 'B'] : ['B', 'A'];
    for (const kind of kinds) for (const side of sides) runs.push({ round, kind, side });
  }
  return runs;
}

/** The middle value; with an even count, the mean of the two middle ones. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('the median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function summarize(values: readonly number[]): Summary {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), runs: values.length };
}

export interface Comparison {
  a: Summary;
  b: Summary;
  /** median(B) / median(A). */
  ratio: number;
  /**
   * B / A of each round's pair (the i-th run of each side, run back to back): a load that moves
   * between rounds moves both of a pair, so these spread less than the sides when the load drifts.
   * Null when the sides ran a different number of times.
   */
  rounds: Summary | null;
  /**
   * Whether the two spreads (min–max) overlap: when they do, some run of A and some run of B came
   * out alike and the difference of the medians is within the noise of these runs; when they do not,
   * every run of one side is above every run of the other.
   */
  overlap: boolean;
}

export function compare(a: readonly number[], b: readonly number[]): Comparison {
  const sa = summarize(a);
  const sb = summarize(b);
  const rounds = a.length === b.length ? summarize(a.map((x, i) => b[i]! / x)) : null;
  return { a: sa, b: sb, ratio: sb.median / sa.median, rounds, overlap: sa.min <= sb.max && sb.min <= sa.max };
}

/** The verdict printed beside a ratio. */
export function verdict(c: Comparison): string {
  if (c.a.runs < 2 || c.b.runs < 2) return 'one run a side: the noise is unknown';
  if (c.overlap) return 'spreads overlap: within the noise';
  return `spreads apart: every run of B ${c.b.median > c.a.median ? 'above' : 'below'} every run of A`;
}
