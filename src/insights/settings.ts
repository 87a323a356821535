/**
 * The rules' settings (docs/insights.md has the table): defaults in code, overridden per workspace
 * by the numbers the insight store keeps (InsightStore.detectionSettings). A write of overrides is
 * checked whole by `checkSettings` (an unknown name or a value outside its range is refused, each
 * named); overrides read back that no longer check (written by another release) are ignored one by
 * one, the default standing in, so detection never stops on them.
 */
import { MAX_COOLDOWN_HOURS } from '../config-detection.ts';
import { INSIGHT_KINDS, type InsightKind } from '../store/insight-port.ts';

interface Setting {
  default: number;
  min: number;
  max: number;
  /** Only these values (a percentile), when given. */
  oneOf?: readonly number[];
  integer?: boolean;
  description: string;
}

const onOff = (kind: InsightKind): [string, Setting] => [
  `${kind}.enabled`,
  { default: 1, min: 0, max: 1, integer: true, description: `1: ${kind} is detected; 0: it is not` },
];
const atLeast = (what: string, fallback: number): Setting => ({
  default: fallback,
  min: 1,
  max: 1_000_000,
  integer: true,
  description: `the least ${what}`,
});

const SETTINGS: Readonly<Record<string, Setting>> = {
  ...Object.fromEntries(INSIGHT_KINDS.map(onOff)),
  'latency_regression.percentile': {
    default: 90,
    min: 50,
    max: 99,
    oneOf: [50, 90, 99],
    description: 'the invocation latency percentile compared: 50, 90 or 99',
  },
  'latency_regression.factor': {
    default: 1.5,
    min: 1.05,
    max: 100,
    description: "the current window's percentile exceeds the baseline's times this",
  },
  'latency_regression.min_invocations': atLeast('skill invocations in each window', 30),
  'cost_spike.factor': {
    default: 3,
    min: 1.05,
    max: 1000,
    description: "the current window's cost exceeds the baseline's daily mean times this",
  },
  'cost_spike.min_usd': {
    default: 1,
    min: 0,
    max: 1_000_000,
    description: 'the least cost (USD) of the current window',
  },
  'cost_spike.min_baseline_traces': atLeast('traces in the baseline', 30),
  'tool_failure_hotspot.error_rate': {
    default: 0.25,
    min: 0.01,
    max: 1,
    description: "a tool's erroring calls / calls in the subject's traces reach this",
  },
  'tool_failure_hotspot.min_calls': atLeast("calls of the tool in the current window's traces", 20),
  'token_efficiency.factor': {
    default: 1.5,
    min: 1.05,
    max: 100,
    description: "the current window's tokens per trace exceed the baseline's times this, the success rate not higher",
  },
  'token_efficiency.min_traces': atLeast('traces in each window', 30),
  'usage_summary.min_traces': atLeast('traces of the day', 1),
  'evaluation_drop.drop': {
    default: 0.2,
    min: 0.01,
    max: 1,
    description: "the current window's mean score is below the baseline's by this share of it",
  },
  'evaluation_drop.min_samples': atLeast('scores in each window', 20),
  cooldown_hours: {
    default: 24,
    min: 1,
    max: MAX_COOLDOWN_HOURS,
    integer: true,
    description: 'an insight of the same kind, workspace and subject is found again only this long after the last',
  },
};

export type Settings = Readonly<Record<string, number>>;

/** How many settings there are: the most overrides a workspace holds, and the length of every settings answer. */
export const SETTING_COUNT = Object.keys(SETTINGS).length;

export const DEFAULT_SETTINGS: Settings = Object.fromEntries(Object.entries(SETTINGS).map(([k, s]) => [k, s.default]));

/** Why `value` cannot be setting `name`, or null when it can. */
function problem(name: string, value: unknown): string | null {
  const s = Object.hasOwn(SETTINGS, name) ? SETTINGS[name] : undefined;
  if (s === undefined) return 'is not a setting';
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
  if (s.oneOf !== undefined && !s.oneOf.includes(value)) return `must be one of ${s.oneOf.join(', ')}`;
  if (s.integer === true && !Number.isInteger(value)) return 'must be a whole number';
  if (value < s.min || value > s.max) return `must be between ${s.min} and ${s.max}`;
  return null;
}

/** A workspace's overrides as written: every name known and every value in its range, or the problems by name. */
export function checkSettings(overrides: Readonly<Record<string, unknown>>): { name: string; problem: string }[] {
  return Object.entries(overrides).flatMap(([name, value]) => {
    const p = problem(name, value);
    return p === null ? [] : [{ name, problem: p }];
  });
}

/** The settings of a workspace: its overrides that check, over the defaults; `ignored` names the others. */
export function effectiveSettings(overrides: Readonly<Record<string, number>> | undefined): {
  settings: Settings;
  ignored: string[];
} {
  const settings: Record<string, number> = { ...DEFAULT_SETTINGS };
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(overrides ?? {})) {
    if (problem(name, value) === null) settings[name] = value;
    else ignored.push(name);
  }
  return { settings, ignored };
}

/** A setting's value (every name this module reads is declared above). */
export function setting(settings: Settings, name: string): number {
  const v = settings[name] ?? SETTINGS[name]?.default;
  if (v === undefined) throw new Error(`unknown detection setting ${name}`);
  return v;
}

/** A setting as the API shows it: its name, range and meaning. */
export interface SettingDescription {
  name: string;
  default: number;
  minimum: number;
  maximum: number;
  integer: boolean;
  one_of?: number[];
  description: string;
}

/** Every setting, by name. */
export function describeSettings(): SettingDescription[] {
  return Object.entries(SETTINGS)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, s]) => ({
      name,
      default: s.default,
      minimum: s.min,
      maximum: s.max,
      integer: s.integer === true,
      ...(s.oneOf !== undefined ? { one_of: [...s.oneOf] } : {}),
      description: s.description,
    }));
}
