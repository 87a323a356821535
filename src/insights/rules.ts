/**
 * The rules: for one workspace and subject (a skill or an agent), the facts of the current window
 * (the 24 hours to the step) and of the baseline (the 7 days before it), and the settings of the
 * workspace (settings.ts), what each kind finds. Pure functions of their inputs; the payload they
 * return is the kind's payload of operation 4 without `kind`, the subject and `window`, which
 * detect.ts adds. docs/insights.md states each rule.
 */
import type { SubjectFacts, ToolFacts } from '../store/facts-port.ts';
import type { InsightKind } from '../store/insight-port.ts';
import { setting, type Settings } from './settings.ts';

/** Detection steps every hour; the current window is the day before the step, the baseline the week before that. */
export const STEP_S = 3600;
export const WINDOW_S = 86400;
const BASELINE_DAYS = 7;
export const BASELINE_S = BASELINE_DAYS * 86400;

/** One subject's facts in one workspace: the current window and the baseline (absent: no spans there). */
export interface FactsPair {
  current: SubjectFacts | undefined;
  baseline: SubjectFacts | undefined;
}

export interface Finding {
  kind: InsightKind;
  payload: Record<string, unknown>;
}

/** Tools listed in a hotspot at most. */
const HOTSPOT_TOOLS = 10;

const on = (s: Settings, kind: InsightKind) => setting(s, `${kind}.enabled`) === 1;
const round = (n: number, digits = 6) => Math.round(n * 10 ** digits) / 10 ** digits;

const PERCENTILES = { 50: ['p50', 'latencyP50'], 90: ['p90', 'latencyP90'], 99: ['p99', 'latencyP99'] } as const;

/** The chosen invocation latency percentile of the current window exceeds the baseline's by the factor, with enough invocations in both. */
export function latencyRegression({ current, baseline }: FactsPair, s: Settings): Finding | null {
  if (current === undefined || baseline === undefined || !on(s, 'latency_regression')) return null;
  const min = setting(s, 'latency_regression.min_invocations');
  if (current.invocations < min || baseline.invocations < min) return null;
  const [name, field] = PERCENTILES[setting(s, 'latency_regression.percentile') as 50 | 90 | 99];
  const now = current[field];
  const before = baseline[field];
  if (now === null || before === null || before <= 0 || now <= setting(s, 'latency_regression.factor') * before)
    return null;
  return {
    kind: 'latency_regression',
    payload: { percentile: name, current_ms: now, previous_ms: before, change_ratio: round(now / before) },
  };
}

/** The current window's cost exceeds the factor times the baseline's daily mean, both large enough to matter. */
export function costSpike({ current, baseline }: FactsPair, s: Settings): Finding | null {
  if (current === undefined || baseline === undefined || !on(s, 'cost_spike')) return null;
  if (baseline.traces < setting(s, 'cost_spike.min_baseline_traces')) return null;
  const daily = baseline.cost / BASELINE_DAYS;
  if (current.cost < setting(s, 'cost_spike.min_usd') || current.cost <= setting(s, 'cost_spike.factor') * daily)
    return null;
  return {
    kind: 'cost_spike',
    payload: {
      cost_usd: round(current.cost),
      baseline_usd: round(daily),
      by_model: current.models.map((m) => ({ model: m.model, cost_usd: round(m.cost) })),
    },
  };
}

/** Tools whose error rate within the subject's traces of the current window reaches the threshold, with enough calls. */
export function toolFailureHotspot({ current }: FactsPair, s: Settings): Finding | null {
  if (current === undefined || !on(s, 'tool_failure_hotspot')) return null;
  const rate = setting(s, 'tool_failure_hotspot.error_rate');
  const min = setting(s, 'tool_failure_hotspot.min_calls');
  const hot = current.tools
    .filter((t): t is ToolFacts & { tool: string } => t.tool !== null && t.calls >= min && t.errors / t.calls >= rate)
    .sort((a, b) => b.errors / b.calls - a.errors / a.calls || b.errors - a.errors)
    .slice(0, HOTSPOT_TOOLS);
  if (hot.length === 0) return null;
  return {
    kind: 'tool_failure_hotspot',
    payload: {
      tools: hot.map((t) => ({
        tool: t.tool,
        mcp: t.mcp,
        calls: t.calls,
        errors: t.errors,
        error_rate: round(t.errors / t.calls),
      })),
    },
  };
}

/** Tokens per trace rose by the factor while the success rate did not rise (no invocations: taken as not risen). */
export function tokenEfficiency({ current, baseline }: FactsPair, s: Settings): Finding | null {
  if (current === undefined || baseline === undefined || !on(s, 'token_efficiency')) return null;
  const min = setting(s, 'token_efficiency.min_traces');
  if (current.traces < min || baseline.traces < min) return null;
  const now = current.tokensPerTrace;
  const before = baseline.tokensPerTrace;
  if (now === null || before === null || before <= 0 || now <= setting(s, 'token_efficiency.factor') * before)
    return null;
  if ((current.successRate ?? 0) > (baseline.successRate ?? 0)) return null;
  return {
    kind: 'token_efficiency',
    payload: {
      tokens_per_trace: round(now),
      success_rate: current.successRate === null ? null : round(current.successRate),
      previous_tokens_per_trace: round(before),
    },
  };
}

/** The day's usage, at the step that ends a UTC day, for a subject with enough traces that day. */
export function usageSummary({ current }: FactsPair, s: Settings, dayEnds: boolean): Finding | null {
  if (!dayEnds || current === undefined || !on(s, 'usage_summary')) return null;
  if (current.traces < setting(s, 'usage_summary.min_traces')) return null;
  return {
    kind: 'usage_summary',
    payload: {
      traces: current.traces,
      sessions: current.sessions,
      active_users: current.activeUsers,
      tokens: current.tokens,
      cost_usd: round(current.cost),
    },
  };
}

/** What every rule over the trace store's facts finds for one workspace and subject at a step. */
export function findings(pair: FactsPair, s: Settings, dayEnds: boolean): Finding[] {
  return [
    usageSummary(pair, s, dayEnds),
    toolFailureHotspot(pair, s),
    latencyRegression(pair, s),
    costSpike(pair, s),
    tokenEfficiency(pair, s),
  ].filter((f): f is Finding => f !== null);
}
