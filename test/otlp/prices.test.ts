import { describe, expect, it } from 'vitest';
import { knownModel, priceOf } from '../../src/otlp/prices.ts';

describe('model prices match the ids providers report', () => {
  it.each([
    ['gpt-4o', 'gpt-4o'],
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['GPT-4o', 'gpt-4o'],
    ['openai/gpt-4o-2024-11-20', 'gpt-4o'],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4'],
    ['anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-haiku-4'],
    ['claude-haiku-4@20251001', 'claude-haiku-4'],
    ['gemini-2.5-pro-preview-06-05', 'gemini-2.5-pro'],
  ])('%s is priced as %s', (reported, known) => {
    expect(knownModel(reported)).toBe(known);
  });

  it.each(['gpt-4omega', 'gpt-4', 'claude-sonnet', 'mistral-large', ''])('%s is unknown and costs 0', (reported) => {
    expect(knownModel(reported)).toBeUndefined();
    expect(priceOf(reported, 1_000_000, 1_000_000)).toBe(0);
  });

  it('a dated id costs what its model costs', () => {
    expect(priceOf('gpt-4o-2024-08-06', 1_000_000, 1_000_000)).toBe(12.5);
    expect(priceOf('gpt-4o-mini-2024-07-18', 2_000_000, 1_000_000)).toBeCloseTo(0.9, 10);
    expect(priceOf(null, 1, 1)).toBe(0);
  });

  it('cache reads and writes, parts of the input, are priced at their own rates', () => {
    // claude-sonnet-4: 3 input, 0.3 cache read, 3.75 cache write, 15 output (USD per million).
    expect(priceOf('claude-sonnet-4-20250514', 1_000_000, 0, { read: 600_000, write: 300_000 })).toBeCloseTo(
      0.1 * 3 + 0.6 * 0.3 + 0.3 * 3.75,
      10,
    );
    // gpt-4o has no cache-write price: a write costs plain input.
    expect(priceOf('gpt-4o', 1_000_000, 0, { read: 0, write: 1_000_000 })).toBe(2.5);
    // Cache counts beyond the input are capped by it: never a negative plain input.
    expect(priceOf('gpt-4o', 100, 0, { read: 1000, write: 0 })).toBeCloseTo((100 * 1.25) / 1e6, 15);
    expect(priceOf('mistral-large', 1000, 1000, { read: 500, write: 0 })).toBe(0);
  });
});
