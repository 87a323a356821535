/**
 * Per-model prices (USD per million tokens) used when a span carries no `gen_ai.usage.cost`.
 * Unknown models cost 0. Figures are list prices at the time of writing, for estimates only.
 */
const PRICES: Record<string, { input: number; output: number }> = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-haiku-4': { input: 1, output: 5 },
  'gemini-2.5-pro': { input: 1.25, output: 10 },
  'llama-3.3-70b': { input: 0.6, output: 0.6 },
};

export function priceOf(model: string | null, inputTokens: number, outputTokens: number): number {
  const p = model === null ? undefined : PRICES[model];
  if (p === undefined) return 0;
  return (inputTokens * p.input + outputTokens * p.output) / 1_000_000;
}
