/**
 * The rules of src/insights/rules.ts and evaluations.ts at their thresholds, the settings that
 * change them (settings.ts: checked on write, ignored when stale on read), and every payload a
 * rule builds valid against its kind's schema of operation 4.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { evaluationDrop } from '../../src/insights/evaluations.ts';
import {
  costSpike,
  findings,
  latencyRegression,
  tokenEfficiency,
  toolFailureHotspot,
  usageSummary,
  type Finding,
} from '../../src/insights/rules.ts';
import { DEFAULT_SETTINGS, checkSettings, effectiveSettings } from '../../src/insights/settings.ts';
import { listInsightSchemas } from '../../src/skills/insight-schemas.ts';
import type { EvaluationFacts, SubjectFacts } from '../../src/store/facts-port.ts';

function facts(fields: Partial<SubjectFacts> = {}): SubjectFacts {
  return {
    window: 0,
    workspaceId: 'ws-1',
    subject: 'sk-1',
    traces: 100,
    sessions: 20,
    activeUsers: 5,
    invocations: 100,
    errors: 2,
    tokens: 100_000,
    cost: 10,
    latencyP50: 500,
    latencyP90: 1000,
    latencyP99: 2000,
    tokensPerTrace: 1000,
    successRate: 0.98,
    tools: [],
    models: [],
    ...fields,
  };
}
const S = DEFAULT_SETTINGS;
const with_ = (overrides: Record<string, number>) => effectiveSettings(overrides).settings;

const ajv = new Ajv2020({ strict: true });
const validators = new Map(listInsightSchemas().items.map((s) => [s.name, ajv.compile(s.schema)]));
/** The finding's payload as detect.ts completes it, checked against its kind's schema. */
function expectValid(f: Finding | null, subject: Record<string, string> = { skill_id: 'sk-1' }): void {
  expect(f).not.toBeNull();
  const payload = {
    kind: f?.kind,
    ...subject,
    window: { start_time_unix_seconds: 0, end_time_unix_seconds: 86400 },
    ...f?.payload,
  };
  const validate = validators.get(f?.kind as string);
  expect(validate?.(payload), JSON.stringify(validate?.errors)).toBe(true);
}

describe('latency_regression', () => {
  it("fires when the current p90 exceeds 1.5 times the baseline's, with 30 invocations in each", () => {
    const baseline = facts({ latencyP90: 1000 });
    expect(latencyRegression({ current: facts({ latencyP90: 1500 }), baseline }, S)).toBeNull();
    const f = latencyRegression({ current: facts({ latencyP90: 1501 }), baseline }, S);
    expect(f?.payload).toEqual({ percentile: 'p90', current_ms: 1501, previous_ms: 1000, change_ratio: 1.501 });
    expectValid(f);
    expectValid(f, { agent_id: 'agent-1' });
  });

  it('needs enough invocations in both windows, and both windows', () => {
    const current = facts({ latencyP90: 3000 });
    expect(latencyRegression({ current: { ...current, invocations: 29 }, baseline: facts() }, S)).toBeNull();
    expect(latencyRegression({ current, baseline: facts({ invocations: 29 }) }, S)).toBeNull();
    expect(latencyRegression({ current, baseline: undefined }, S)).toBeNull();
    expect(
      latencyRegression({ current, baseline: facts() }, with_({ 'latency_regression.min_invocations': 101 })),
    ).toBeNull();
  });

  it('compares the percentile and factor a workspace sets, or nothing when switched off', () => {
    const current = facts({ latencyP90: 1000, latencyP99: 5000 });
    const p99 = with_({ 'latency_regression.percentile': 99, 'latency_regression.factor': 2 });
    expect(latencyRegression({ current, baseline: facts() }, p99)?.payload.percentile).toBe('p99');
    expect(latencyRegression({ current, baseline: facts() }, S)).toBeNull();
    const off = with_({ 'latency_regression.enabled': 0, 'latency_regression.percentile': 99 });
    expect(latencyRegression({ current, baseline: facts() }, off)).toBeNull();
  });
});

describe('cost_spike', () => {
  const baseline = facts({ cost: 70 }); // 10 a day
  it("fires when the day's cost exceeds 3 times the baseline's daily mean, naming the models", () => {
    expect(costSpike({ current: facts({ cost: 30 }), baseline }, S)).toBeNull();
    const models = [
      { model: 'claude-opus-4', cost: 25 },
      { model: 'gpt-4o', cost: 5.5 },
    ];
    const f = costSpike({ current: facts({ cost: 30.5, models }), baseline }, S);
    expect(f?.payload).toEqual({
      cost_usd: 30.5,
      baseline_usd: 10,
      by_model: [
        { model: 'claude-opus-4', cost_usd: 25 },
        { model: 'gpt-4o', cost_usd: 5.5 },
      ],
    });
    expectValid(f);
  });

  it('needs a baseline of 30 traces and a cost of at least 1 USD', () => {
    expect(costSpike({ current: facts({ cost: 100 }), baseline: facts({ cost: 7, traces: 29 }) }, S)).toBeNull();
    expect(costSpike({ current: facts({ cost: 0.9 }), baseline: facts({ cost: 0.07 }) }, S)).toBeNull();
    expect(costSpike({ current: facts({ cost: 1 }), baseline: facts({ cost: 0.07 }) }, S)).not.toBeNull();
    expect(costSpike({ current: facts({ cost: 100 }), baseline: undefined }, S)).toBeNull();
  });
});

describe('tool_failure_hotspot', () => {
  it('lists the tools whose error rate reaches 25 % with at least 20 calls, worst first', () => {
    const current = facts({
      tools: [
        { tool: 'search', mcp: 'srv', calls: 40, errors: 10 },
        { tool: 'fetch', mcp: null, calls: 20, errors: 10 },
        { tool: 'few', mcp: null, calls: 19, errors: 19 },
        { tool: 'fine', mcp: null, calls: 100, errors: 24 },
        { tool: null, mcp: 'srv', calls: 50, errors: 50 },
      ],
    });
    const f = toolFailureHotspot({ current, baseline: undefined }, S);
    expect(f?.payload).toEqual({
      tools: [
        { tool: 'fetch', mcp: null, calls: 20, errors: 10, error_rate: 0.5 },
        { tool: 'search', mcp: 'srv', calls: 40, errors: 10, error_rate: 0.25 },
      ],
    });
    expectValid(f);
    expect(
      toolFailureHotspot({ current, baseline: undefined }, with_({ 'tool_failure_hotspot.error_rate': 0.6 })),
    ).toBeNull();
    expect(toolFailureHotspot({ current: facts(), baseline: undefined }, S)).toBeNull();
  });
});

describe('token_efficiency', () => {
  const baseline = facts({ tokensPerTrace: 1000, successRate: 0.9 });
  it('fires when tokens per trace rose 1.5 times and the success rate did not rise', () => {
    expect(tokenEfficiency({ current: facts({ tokensPerTrace: 1500, successRate: 0.9 }), baseline }, S)).toBeNull();
    const f = tokenEfficiency({ current: facts({ tokensPerTrace: 1600, successRate: 0.9 }), baseline }, S);
    expect(f?.payload).toEqual({ tokens_per_trace: 1600, success_rate: 0.9, previous_tokens_per_trace: 1000 });
    expectValid(f);
    expect(tokenEfficiency({ current: facts({ tokensPerTrace: 1600, successRate: 0.91 }), baseline }, S)).toBeNull();
  });

  it('takes a window without invocations (an agent without skills) as a success rate that did not rise', () => {
    const current = facts({ tokensPerTrace: 2000, successRate: null, invocations: 0 });
    const f = tokenEfficiency({ current, baseline: facts({ successRate: null }) }, S);
    expect(f?.payload.success_rate).toBeNull();
    expectValid(f, { agent_id: 'agent-1' });
    expect(tokenEfficiency({ current, baseline: facts({ traces: 29 }) }, S)).toBeNull();
  });
});

describe('usage_summary', () => {
  it('summarizes the day at the step that ends it, for a subject with a trace that day', () => {
    const pair = { current: facts({ cost: 1.23456789 }), baseline: undefined };
    expect(usageSummary(pair, S, false)).toBeNull();
    const f = usageSummary(pair, S, true);
    expect(f?.payload).toEqual({ traces: 100, sessions: 20, active_users: 5, tokens: 100_000, cost_usd: 1.234568 });
    expectValid(f);
    expect(usageSummary(pair, with_({ 'usage_summary.min_traces': 101 }), true)).toBeNull();
    expect(findings(pair, S, true).map((x) => x.kind)).toEqual(['usage_summary']);
  });
});

describe('evaluation_drop', () => {
  const score = (meanScore: number, samples = 50): EvaluationFacts => ({
    window: 0,
    workspaceId: 'ws-1',
    subject: 'agent-1',
    evaluationName: 'relevance',
    meanScore,
    samples,
  });
  it('fires when the mean score fell by a fifth of the baseline, with 20 scores in each window', () => {
    expect(evaluationDrop(score(0.81), score(1), S)).toBeNull();
    const f = evaluationDrop(score(0.8), score(1, 300), S);
    expect(f?.payload).toEqual({
      evaluation_name: 'relevance',
      current_score: 0.8,
      previous_score: 1,
      samples: 50,
      previous_samples: 300,
    });
    expectValid(f, { agent_id: 'agent-1' });
    expect(evaluationDrop(score(0.1, 19), score(1), S)).toBeNull();
    expect(evaluationDrop(score(-1), score(0), S)).toBeNull();
    // Scores below zero: a fall is a fall of the magnitude.
    expect(evaluationDrop(score(-1.3), score(-1), S)).not.toBeNull();
  });
});

describe('settings', () => {
  it('checks a write whole: unknown names, values out of range, fractions where whole numbers go', () => {
    expect(checkSettings({ 'latency_regression.factor': 2, cooldown_hours: 6 })).toEqual([]);
    expect(
      checkSettings({
        'latency_regression.factr': 2,
        'latency_regression.factor': 1,
        'latency_regression.percentile': 95,
        cooldown_hours: 1.5,
        'cost_spike.enabled': 2,
        'cost_spike.min_usd': Number.NaN,
      }),
    ).toEqual([
      { name: 'latency_regression.factr', problem: 'is not a setting' },
      { name: 'latency_regression.factor', problem: 'must be between 1.05 and 100' },
      { name: 'latency_regression.percentile', problem: 'must be one of 50, 90, 99' },
      { name: 'cooldown_hours', problem: 'must be a whole number' },
      { name: 'cost_spike.enabled', problem: 'must be between 0 and 1' },
      { name: 'cost_spike.min_usd', problem: 'must be a number' },
    ]);
  });

  it('reads overrides that no longer check as absent, keeping the others', () => {
    const { settings, ignored } = effectiveSettings({ 'cost_spike.factor': 5, 'gone.setting': 1, cooldown_hours: 0 });
    expect(settings['cost_spike.factor']).toBe(5);
    expect(settings.cooldown_hours).toBe(24);
    expect(settings['gone.setting']).toBeUndefined();
    expect(ignored).toEqual(['gone.setting', 'cooldown_hours']);
    expect(effectiveSettings(undefined).settings).toEqual(DEFAULT_SETTINGS);
  });
});
