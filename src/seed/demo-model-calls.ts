/**
 * The demo model calls' provider and prompt-cache use, as the providers report them: Anthropic
 * caches on request (reads of a cached prefix, now and then a write of a new one, both priced
 * apart), OpenAI and Gemini read a cached prefix of a long enough prompt by themselves and never
 * report a write, the Llama host reports no cache.
 */
import { priceOf } from '../otlp/prices.ts';

/** Agent names frameworks send that are no registry agent's id (stored as sent). */
export const UNREGISTERED_AGENTS = ['langgraph-supervisor', 'crew-researcher', 'triage-router'] as const;

/** `gen_ai.provider.name` of a demo model (semantic conventions' well-known values). */
export function providerOf(model: string): string | null {
  if (model.startsWith('claude')) return 'anthropic';
  if (model.startsWith('gpt')) return 'openai';
  if (model.startsWith('gemini')) return 'gcp.gemini';
  if (model.startsWith('llama')) return 'groq';
  return null;
}

/** Cached prompts come in blocks of this many tokens (OpenAI's and Gemini's granularity). */
const BLOCK = 128;

/**
 * A model call of `input` tokens (cached ones included) and `output` tokens: its provider, tokens,
 * cache counts and list price. Random draws come from `rnd` only.
 */
export function modelCall(
  model: string,
  input: number,
  output: number,
  rnd: () => number,
): {
  model: string;
  provider: string | null;
  tokens: number;
  cost: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
} {
  const provider = providerOf(model);
  let read = 0;
  let write = 0;
  if (provider === 'anthropic') {
    // A cached system prompt and tools: mostly read, written again when the cache has expired.
    const prefix = Math.floor(input * (0.4 + 0.4 * rnd()));
    if (rnd() < 0.75) read = prefix;
    else write = prefix;
  } else if ((provider === 'openai' || provider === 'gcp.gemini') && input >= 1024 && rnd() < 0.6)
    read = Math.floor((input * (0.3 + 0.5 * rnd())) / BLOCK) * BLOCK;
  return {
    model,
    provider,
    tokens: input + output,
    cost: priceOf(model, input, output, { read, write }),
    cache_read_tokens: read,
    cache_creation_tokens: write,
  };
}
