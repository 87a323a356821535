/**
 * What the console says of an insight, as text (no DOM, so the tests run it in Node): each kind's
 * key numbers read from its payload (operation 4's schemas), and its window.
 */
import { formatValue } from '../format.ts';

/** A kind as words. */
export const kindLabel = (kind: string) => kind.replace(/_/g, ' ');

const num = (v: unknown) => (typeof v === 'number' ? v : null);
const pct = (v: unknown) => formatValue(num(v), 'ratio');

/** The few numbers that say what an insight found, by kind; other kinds: their numeric members. */
export function keyNumbers(kind: string, p: Record<string, unknown>): string {
  switch (kind) {
    case 'usage_summary':
      return [
        `${formatValue(num(p.traces), null)} traces`,
        `${formatValue(num(p.sessions), null)} sessions`,
        `${formatValue(num(p.active_users), null)} users`,
        `${formatValue(num(p.tokens), null)} tokens`,
        ...(num(p.cost_usd) !== null ? [formatValue(num(p.cost_usd), 'usd')] : []),
      ].join(' · ');
    case 'latency_regression':
      return `${typeof p.percentile === 'string' ? p.percentile : 'latency'} ${formatValue(num(p.current_ms), 'ms')} against ${formatValue(num(p.previous_ms), 'ms')} (${formatValue(num(p.change_ratio), null)}×)`;
    case 'cost_spike':
      return `${formatValue(num(p.cost_usd), 'usd')} against a baseline of ${formatValue(num(p.baseline_usd), 'usd')}`;
    case 'token_efficiency':
      return `${formatValue(num(p.tokens_per_trace), null)} tokens per trace, success ${pct(p.success_rate)}`;
    case 'tool_failure_hotspot': {
      const tools = Array.isArray(p.tools) ? (p.tools as Record<string, unknown>[]) : [];
      const top = tools[0];
      if (top === undefined) return 'no tool';
      const more = tools.length > 1 ? ` and ${tools.length - 1} more` : '';
      return `${String(top.tool)}: ${formatValue(num(top.errors), null)} of ${formatValue(num(top.calls), null)} calls failed (${pct(top.error_rate)})${more}`;
    }
    case 'evaluation_drop':
      return `${typeof p.evaluation_name === 'string' ? p.evaluation_name : 'score'} ${formatValue(num(p.current_score), null)} against ${formatValue(num(p.previous_score), null)} (${formatValue(num(p.samples), null)} samples)`;
    default:
      return Object.entries(p)
        .filter(([, v]) => typeof v === 'number')
        .map(([k, v]) => `${k.replace(/_/g, ' ')} ${formatValue(v as number, null)}`)
        .join(' · ');
  }
}

const DAY = 86_400;
const date = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
const minute = (s: number) => new Date(s * 1000).toISOString().slice(0, 16).replace('T', ' ');

/** A window as text: whole UTC days as their dates (the last one included), else from and to the minute. */
export function windowText(start: number, end: number): string {
  if (start % DAY !== 0 || end % DAY !== 0) return `${minute(start)} to ${minute(end)}`;
  return end - start === DAY ? date(start) : `${date(start)} to ${date(end - DAY)}`;
}
