/**
 * The demo telemetry of the first-start seed: the same spans on every run, spread over the whole
 * window, with agents the registry declares (invoke_agent roots over skills the agent uses, its
 * model, its tools, the agent on every span of its traces), providers consistent with the models,
 * and cache counts priced apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { priceOf } from '../../src/otlp/prices.ts';
import { demoSpans, type DemoTraceOptions } from '../../src/seed/demo-traces.ts';
import { modelCall, providerOf, UNREGISTERED_AGENTS } from '../../src/seed/demo-model-calls.ts';
import { prng } from '../../src/shared/prng.ts';
import { demoTraceOptions, seedDemoIfEmpty } from '../../src/seed/seed.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import type { SpanRow } from '../../src/store/trace-port.ts';

const END = 1_800_000_000;
let store: SqliteRegistryStore;
let options: DemoTraceOptions;
let rows: SpanRow[];

const generate = (o: DemoTraceOptions) => [...demoSpans(o, 700)].flat();

beforeAll(async () => {
  store = new SqliteRegistryStore(':memory:');
  await seedDemoIfEmpty(store);
  const found = await demoTraceOptions(store, END, 30);
  if (found === null) throw new Error('the demo bundle has no skill');
  options = { ...found, spans: 5000 };
  rows = generate(options);
});
afterAll(async () => {
  await store.close();
});

describe('demo telemetry', () => {
  it('is the same on every run, exactly as many spans as asked, over the whole window', () => {
    expect(generate(options)).toEqual(rows);
    expect(rows).toHaveLength(5000);
    const starts = rows.map((r) => r.start_s);
    expect(Math.min(...starts)).toBeLessThan(END - 29 * 86400);
    expect(Math.max(...starts)).toBeGreaterThan(END - 86400);
    expect(starts.every((s) => s >= END - 30 * 86400 && s < END)).toBe(true);
  });

  it('runs most traces of declared skills under a registry agent, as an invoke_agent root', async () => {
    const agents = new Map((options.agents ?? []).map((a) => [a.id, a]));
    expect(agents.size).toBe(110);
    const roots = rows.filter((r) => r.name.startsWith('invoke_agent '));
    const traces = new Set(rows.map((r) => r.trace_id));
    expect(roots.length / traces.size).toBeGreaterThan(0.5);
    const registered = roots.filter((r) => agents.has(r.agent ?? ''));
    expect(new Set(registered.map((r) => r.agent)).size).toBeGreaterThan(20);
    expect(roots.length - registered.length).toBeGreaterThan(0);
    for (const root of roots) {
      expect(root).toMatchObject({ category: 'other', parent_span_id: null, name: `invoke_agent ${root.agent}` });
      const trace = rows.filter((r) => r.trace_id === root.trace_id);
      expect(trace.every((r) => r.agent === root.agent)).toBe(true);
      const invocation = trace.find((r) => r.category === 'skill_invocation');
      expect(invocation?.parent_span_id).toBe(root.span_id);
      expect(root.duration_ms).toBeGreaterThan(invocation?.duration_ms ?? Infinity);
      const agent = agents.get(root.agent ?? '');
      if (agent === undefined) {
        expect(UNREGISTERED_AGENTS).toContain(root.agent);
        continue;
      }
      expect(agent.skills).toContain(invocation?.skill);
      for (const r of trace) {
        if (r.category === 'model_call') expect(r.model).toBe(agent.model);
        if (r.category === 'tool_call') expect(agent.tools).toContainEqual({ tool: r.tool, server: r.mcp });
      }
    }
    // The agents are the registry's: agent-0001 among them, by its id.
    const [invoice] = await store.getArtifacts(['agent-0001']);
    expect(invoice?.name).toBe('Invoice Parser');
    expect(registered.some((r) => r.agent === 'agent-0001')).toBe(true);
    // Traces of no agent carry none.
    const agentTraces = new Set(roots.map((r) => r.trace_id));
    expect(rows.filter((r) => !agentTraces.has(r.trace_id)).every((r) => r.agent === null)).toBe(true);
  });

  it('names the provider of every model and prices cache reads and writes apart', () => {
    const calls = rows.filter((r) => r.category === 'model_call');
    for (const r of calls) {
      expect(r.provider).toBe(providerOf(r.model ?? ''));
      expect(r.cache_read_tokens + r.cache_creation_tokens).toBeLessThan(r.tokens);
    }
    expect(new Set(calls.map((r) => r.provider))).toEqual(new Set(['openai', 'anthropic', 'gcp.gemini', 'groq']));
    const by = (p: string) => calls.filter((r) => r.provider === p);
    expect(by('anthropic').some((r) => r.cache_creation_tokens > 0)).toBe(true);
    expect(by('anthropic').some((r) => r.cache_read_tokens > 0)).toBe(true);
    expect(by('openai').some((r) => r.cache_read_tokens > 0)).toBe(true);
    for (const p of ['openai', 'gcp.gemini', 'groq'])
      expect(by(p).every((r) => r.cache_creation_tokens === 0)).toBe(true);
    expect(by('groq').every((r) => r.cache_read_tokens === 0)).toBe(true);
    // Cache reads and writes at their own prices: a read costs less than plain input.
    const rnd = prng(3);
    for (let i = 0; i < 50; i++) {
      const call = modelCall('claude-sonnet-4', 2000, 300, rnd);
      const cache = { read: call.cache_read_tokens, write: call.cache_creation_tokens };
      expect(call.cost).toBe(priceOf('claude-sonnet-4', 2000, 300, cache));
      if (cache.read > 0) expect(call.cost).toBeLessThan(priceOf('claude-sonnet-4', 2000, 300));
      if (cache.write > 0) expect(call.cost).toBeGreaterThan(priceOf('claude-sonnet-4', 2000, 300));
    }
    expect(rows.filter((r) => r.category !== 'model_call').every((r) => r.provider === null && r.tokens === 0)).toBe(
      true,
    );
  });

  it('without agents, runs no trace under an agent', () => {
    const plain = generate({ ...options, agents: [], spans: 1000 });
    expect(plain).toHaveLength(1000);
    expect(plain.every((r) => r.agent === null && r.category !== 'other')).toBe(true);
    expect(plain.some((r) => r.cache_read_tokens > 0)).toBe(true);
  });
});
