/**
 * Per-model prices (USD per million tokens) used when a span carries no `gen_ai.usage.cost`.
 * Figures are list prices at the time of writing, for estimates only.
 *
 * Providers report dated or qualified ids (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`,
 * `openai/gpt-4o`, Bedrock's `anthropic.claude-haiku-4-5-20251001-v1:0`): a model id is matched,
 * case-insensitively and after any `provider/` or `vendor.` prefix, by the longest known id it starts
 * with, followed by the end or a `-`, `:` or `@`. So `gpt-4o-mini-2024-07-18` is gpt-4o-mini, not
 * gpt-4o, and `gpt-4omega` is unknown. Unknown models cost 0.
 *
 * Cached input is priced apart: `cacheRead` for tokens served from the provider's prompt cache,
 * `cacheWrite` for tokens written to it (Anthropic's 5-minute cache writes; OpenAI and Google charge
 * a write as plain input). A model without a cache price charges its input price.
 */
interface Price {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}
const PRICES: Record<string, Price> = {
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cacheRead: 0.31 },
  'llama-3.3-70b': { input: 0.6, output: 0.6 },
};
const KNOWN = Object.keys(PRICES).sort((a, b) => b.length - a.length);

/** The price-table id a reported model id stands for, or undefined. */
export function knownModel(model: string): string | undefined {
  const id = model.toLowerCase().replace(/^.*\//, '');
  for (const candidate of [id, id.replace(/^[a-z]+\./, '')]) {
    const hit = KNOWN.find((k) => candidate.startsWith(k) && /^(?:$|[-:@])/.test(candidate.slice(k.length)));
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/**
 * The list price of a model call: `inputTokens` counts every input token, `cache` the parts of them
 * read from and written to the prompt cache (each at most what is left of the input).
 */
export function priceOf(
  model: string | null,
  inputTokens: number,
  outputTokens: number,
  cache: { read: number; write: number } = { read: 0, write: 0 },
): number {
  const known = model === null ? undefined : knownModel(model);
  const p = known === undefined ? undefined : PRICES[known];
  if (p === undefined) return 0;
  const read = Math.min(cache.read, inputTokens);
  const write = Math.min(cache.write, inputTokens - read);
  const plain = inputTokens - read - write;
  const input = plain * p.input + read * (p.cacheRead ?? p.input) + write * (p.cacheWrite ?? p.input);
  return (input + outputTokens * p.output) / 1_000_000;
}
