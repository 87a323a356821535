/**
 * Insights as the console shows them: markers on the charts (a band over each insight's window, on
 * the panel its kind is about), a list with each insight's key numbers, and the numbers themselves
 * read from its payload (the schemas of REST operation 4).
 */
import type uPlot from 'uplot';
import { el, empty, formatValue } from '../dom.ts';

/** An insight as REST lists it (snake_case) or GraphQL (camelCase), reduced to what the console shows. */
export interface ShownInsight {
  id: string;
  kind: string;
  start: number;
  end: number;
  payload: Record<string, unknown>;
  createdAt: string;
  subject: { type: string; id: string; name?: string; href?: string };
}

/** The REST answer of the skill's and the agent's insight lists. */
export interface InsightListAnswer {
  items: {
    id: string;
    kind: string;
    subject: { type: string; id: string; server?: string | null };
    window: { start_time_unix_seconds: number; end_time_unix_seconds: number };
    payload: Record<string, unknown>;
    created_at: string;
  }[];
  next_cursor?: string;
}

export function fromRest(answer: InsightListAnswer): ShownInsight[] {
  return answer.items.map((i) => ({
    id: i.id,
    kind: i.kind,
    start: i.window.start_time_unix_seconds,
    end: i.window.end_time_unix_seconds,
    payload: i.payload,
    createdAt: i.created_at,
    subject: { type: i.subject.type, id: i.subject.id },
  }));
}

const COLORS: Record<string, string> = {
  usage_summary: 'rgba(11, 92, 173, 0.12)',
  tool_failure_hotspot: 'rgba(196, 67, 43, 0.18)',
  latency_regression: 'rgba(183, 121, 31, 0.22)',
  cost_spike: 'rgba(130, 80, 223, 0.18)',
  token_efficiency: 'rgba(47, 143, 70, 0.18)',
  evaluation_drop: 'rgba(196, 67, 43, 0.18)',
};

export const kindLabel = (kind: string) => kind.replace(/_/g, ' ');

/**
 * Bands over the insights' windows (clipped to the chart), drawn under the series. A point stands
 * for the bucket that starts at it, so a window is drawn over the points of the buckets it
 * covers: shifted back by half a bucket (`bucketS`, the distance between two points).
 */
export function markerPlugin(insights: readonly ShownInsight[], bucketS: number): uPlot.Plugin {
  const half = bucketS / 2;
  return {
    hooks: {
      drawClear: [
        (u: uPlot) => {
          const { ctx, bbox } = u;
          ctx.save();
          for (const i of insights) {
            const x0 = Math.max(bbox.left, u.valToPos(i.start - half, 'x', true));
            const x1 = Math.min(bbox.left + bbox.width, u.valToPos(i.end - half, 'x', true));
            if (x1 <= x0) continue;
            ctx.fillStyle = COLORS[i.kind] ?? 'rgba(87, 96, 106, 0.15)';
            ctx.fillRect(x0, bbox.top, Math.max(2, x1 - x0), bbox.height);
          }
          ctx.restore();
        },
      ],
    },
  };
}

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

/** The insights as a table: kind, subject (a link when the page knows one), window, key numbers. */
export function insightTable(insights: readonly ShownInsight[], withSubject: boolean, none: string): HTMLElement {
  if (insights.length === 0) return empty(none);
  return el(
    'div',
    { className: 'scroll' },
    el(
      'table',
      { className: 'insights' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', {}, 'Kind'),
          ...(withSubject ? [el('th', {}, 'Subject')] : []),
          el('th', {}, 'Window (UTC)'),
          el('th', {}, 'What it found'),
        ),
      ),
      el(
        'tbody',
        {},
        ...insights.map((i) =>
          el(
            'tr',
            { 'data-insight': i.id, 'data-kind': i.kind },
            el('td', {}, el('span', { className: `kind ${i.kind}` }, kindLabel(i.kind))),
            ...(withSubject
              ? [
                  el(
                    'td',
                    { className: 'subject' },
                    i.subject.href !== undefined
                      ? el('a', { href: i.subject.href, 'data-link': true }, i.subject.name ?? i.subject.id)
                      : `${i.subject.type} ${i.subject.name ?? i.subject.id}`,
                  ),
                ]
              : []),
            el('td', { className: 'window' }, windowText(i.start, i.end)),
            el('td', { className: 'found' }, keyNumbers(i.kind, i.payload)),
          ),
        ),
      ),
    ),
  );
}
