/**
 * Insights as the console shows them: markers on the charts (a band over each insight's window, on
 * the panel its kind is about), a list with each insight's key numbers, and the numbers themselves
 * read from its payload (the schemas of REST operation 4).
 */
import type uPlot from 'uplot';
import { el, empty } from '../dom.ts';
import { keyNumbers, kindLabel, windowText } from './insight-text.ts';

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
