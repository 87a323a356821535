/**
 * The analytics view the skill and agent pages share: panels of time series over a range (presets
 * or custom dates), bucket and group-by, with the previous period overlaid (ungrouped); the same
 * numbers as a table and as CSV. One operation-1 time_series request with compare answers it; the
 * choices live in the URL, so every view has a link. Each page says which panels, which group-by
 * choices and whether a version can be chosen, and how the answer is fetched.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Answer } from '../api.ts';
import { el, empty, navigate, problemView } from '../dom.ts';
import { formatValue } from '../format.ts';
import { csvText } from './csv.ts';
import { insightTable, markerPlugin, type ShownInsight } from './insight-view.ts';
import { stampsAndValues, toCsv, type GroupNames, type Series, type StatsAnswer } from './series.ts';

const DAY = 86_400;
const PRESETS = { '7d': 7, '30d': 30, '90d': 90 } as const;
const COLORS = ['#0b5cad', '#c4432b', '#2f8f46', '#8250df', '#b7791f'];

/** One chart: its title, the queries it plots, and the insight kinds it marks (the first panel: any other). */
export interface Panel {
  title: string;
  queries: { name: string; measure: string }[];
  insights?: string[];
}

/** The panels both pages draw. */
export const PANEL = {
  traces: { title: 'Traces', queries: [{ name: 'traces', measure: 'traces' }] },
  errorRate: {
    title: 'Error rate',
    queries: [{ name: 'error_rate', measure: 'error_rate' }],
    insights: ['tool_failure_hotspot', 'evaluation_drop'],
  },
  latency: {
    title: 'Latency',
    queries: [
      { name: 'p50', measure: 'latency_p50' },
      { name: 'p90', measure: 'latency_p90' },
      { name: 'p99', measure: 'latency_p99' },
    ],
    insights: ['latency_regression'],
  },
  cost: { title: 'Cost', queries: [{ name: 'cost', measure: 'cost' }], insights: ['cost_spike'] },
} satisfies Record<string, Panel>;

/** What a page offers: its panels, its group-by choices ('' for none) and a version choice or not. */
export interface AnalyticsSpec {
  panels: Panel[];
  groups: string[];
  version: boolean;
}

/** The page's choices, from the URL (defaults: 7 days, automatic bucket, no group). */
export interface View {
  range: string;
  start: number;
  end: number;
  bucket: string;
  group: string;
  version: string;
  view: 'charts' | 'table';
}

export function viewOf(query: URLSearchParams, spec: AnalyticsSpec): View {
  const end = Math.ceil(Date.now() / 1000 / 3600) * 3600;
  const range = query.get('range') ?? '7d';
  const days = PRESETS[range as keyof typeof PRESETS] as number | undefined;
  const date = (s: string | null) => (s === null || s === '' ? NaN : Date.parse(`${s}T00:00:00Z`) / 1000);
  const custom = range === 'custom' && !Number.isNaN(date(query.get('start'))) && !Number.isNaN(date(query.get('end')));
  return {
    range: custom ? 'custom' : days !== undefined ? range : '7d',
    start: custom ? date(query.get('start')) : end - (days ?? 7) * DAY,
    end: custom ? date(query.get('end')) + DAY : end,
    bucket: query.get('bucket') ?? '',
    group: spec.groups.includes(query.get('group') ?? '') ? (query.get('group') ?? '') : '',
    version: spec.version && /^\d+$/.test(query.get('version') ?? '') ? (query.get('version') ?? '') : '',
    view: query.get('view') === 'table' ? 'table' : 'charts',
  };
}

const isoDay = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);

/** Moves to this page's URL with `changes` made to its query (an empty value removes the key). */
export function applier(query: URLSearchParams): (changes: Record<string, string>) => void {
  return (changes) => {
    const next = new URLSearchParams(query);
    for (const [k, v] of Object.entries(changes)) {
      if (v === '') next.delete(k);
      else next.set(k, v);
    }
    navigate(`${location.pathname}?${next.toString()}`);
  };
}

function controls(view: View, spec: AnalyticsSpec, apply: (changes: Record<string, string>) => void): HTMLElement {
  const select = (name: string, options: [string, string][], value: string) => {
    const s = el(
      'select',
      { name },
      ...options.map(([v, label]) => el('option', { value: v, selected: v === value }, label)),
    );
    s.addEventListener('change', () => {
      apply({ [name]: s.value });
    });
    return el('label', {}, `${name} `, s);
  };
  const start = el('input', { type: 'date', name: 'start', value: isoDay(view.start) });
  const end = el('input', { type: 'date', name: 'end', value: isoDay(view.end - DAY) });
  const dates = el('button', { type: 'button' }, 'Apply dates');
  dates.addEventListener('click', () => {
    apply({ range: 'custom', start: start.value, end: end.value });
  });
  const version = el('input', { type: 'number', name: 'version', min: '1', value: view.version, placeholder: 'all' });
  version.addEventListener('change', () => {
    apply({ version: version.value });
  });
  const toggle = el('button', { type: 'button', name: 'view' }, view.view === 'charts' ? 'Show table' : 'Show charts');
  toggle.addEventListener('click', () => {
    apply({ view: view.view === 'charts' ? 'table' : 'charts' });
  });
  return el(
    'div',
    { className: 'controls' },
    select(
      'range',
      [
        ['7d', 'last 7 days'],
        ['30d', 'last 30 days'],
        ['90d', 'last 90 days'],
        ['custom', 'custom'],
      ],
      view.range,
    ),
    el('span', { className: 'dates' }, start, end, dates),
    select(
      'bucket',
      [
        ['', 'automatic'],
        ['day', 'day'],
        ['week', 'week'],
      ],
      view.bucket,
    ),
    select(
      'group',
      spec.groups.map((g) => [g, g === '' ? 'none' : g]),
      view.group,
    ),
    ...(spec.version ? [el('label', {}, 'version ', version)] : []),
    toggle,
  );
}

/** The operation-1 request of the view: every panel's queries as time series, with the previous period. */
export function seriesRequest(view: View, spec: AnalyticsSpec): object {
  return {
    start_time_unix_seconds: view.start,
    end_time_unix_seconds: view.end,
    request_type: 'time_series',
    compare: 'previous_period',
    ...(view.bucket !== '' ? { bucket: view.bucket } : {}),
    queries: spec.panels.flatMap((p) =>
      p.queries.map((q) => ({ ...q, ...(view.group !== '' ? { group_by: [view.group], limit: 5 } : {}) })),
    ),
  };
}

function chart(
  title: string,
  series: Series[],
  previous: Series[],
  width: number,
  names: GroupNames,
  insights: ShownInsight[],
): HTMLElement {
  const { stamps, columns } = stampsAndValues(series, previous, names);
  const box = el('figure', { className: 'chart', 'data-title': title });
  // The insights it marks, by id: the browser test compares them with the insight list's answer.
  box.setAttribute('data-insights', JSON.stringify(insights.map((i) => i.id)));
  // What is plotted, as numbers: the browser test compares it with the REST answer.
  box.setAttribute(
    'data-plotted',
    JSON.stringify({ x: stamps, series: Object.fromEntries(columns.map((c) => [c.label, c.values])) }),
  );
  box.append(el('figcaption', {}, title));
  if (stamps.length === 0) {
    box.append(empty('No data in this range.'));
    return box;
  }
  const opts: uPlot.Options = {
    width,
    height: 200,
    plugins: [markerPlugin(insights, stamps.length > 1 ? (stamps[1] ?? 0) - (stamps[0] ?? 0) : DAY)],
    series: [
      {},
      ...columns.map((c) => ({
        label: c.label,
        stroke: COLORS[c.colorIndex % COLORS.length] ?? '#333',
        width: 2,
        ...(c.previous ? { dash: [6, 4] } : {}),
        spanGaps: false,
        value: (_u: uPlot, v: number | null) => formatValue(v, c.unit),
      })),
    ],
    axes: [{}, { size: 84, values: (_u, vals) => vals.map((v) => formatValue(v, series[0]?.unit ?? null)) }],
  };
  new uPlot(opts, [stamps, ...columns.map((c) => c.values)], box);
  return box;
}

/** Rows of text cells as a table: the first column is a label, the others numbers. */
export function numbersTable(className: string, header: string[], rows: string[][]): HTMLElement {
  return el(
    'div',
    { className: 'scroll' },
    el(
      'table',
      { className },
      el('thead', {}, el('tr', {}, ...header.map((h, i) => el('th', { className: i === 0 ? '' : 'num' }, h)))),
      el(
        'tbody',
        {},
        ...rows.map((r) => el('tr', {}, ...r.map((v, i) => el('td', { className: i === 0 ? '' : 'num' }, v)))),
      ),
    ),
  );
}

/** The insights each panel marks: those of its kinds; the first panel also those no panel claims. */
function insightsByPanel(panels: Panel[], insights: readonly ShownInsight[]): ShownInsight[][] {
  const claimed = new Set(panels.flatMap((p) => p.insights ?? []));
  return panels.map((p, i) =>
    insights.filter((x) => (p.insights ?? []).includes(x.kind) || (i === 0 && !claimed.has(x.kind))),
  );
}

/**
 * The analytics under a page's head: controls, then the answer (warnings, range, CSV download and
 * the charts or the table, then the insights of the range), or its problem. `csvName` names the
 * download; `insights` are those whose window meets the range (marked on the charts).
 */
export function analyticsView(
  spec: AnalyticsSpec,
  view: View,
  apply: (changes: Record<string, string>) => void,
  stats: Answer<StatsAnswer>,
  names: GroupNames,
  csvName: string,
  insights: Answer<ShownInsight[]>,
): HTMLElement[] {
  if (stats.problem !== undefined) return [controls(view, spec, apply), problemView(stats.problem)];
  const answer = stats.data;
  const shown = (insights.data ?? []).filter((i) => i.end > view.start && i.start < view.end);
  const marked = insightsByPanel(spec.panels, shown);
  const download = el('a', { className: 'button', download: csvName, href: '#' }, 'Download CSV');
  download.addEventListener('click', () => {
    const { header, rows } = toCsv(answer, (v) => v, names);
    download.href = URL.createObjectURL(new Blob([csvText([header, ...rows])], { type: 'text/csv' }));
  });
  const width = Math.max(280, Math.min(document.querySelector('main')?.clientWidth || 900, 960) - 24);
  const seriesOf = (data: { series: Series[] } | undefined, queryNames: string[]) =>
    (data?.series ?? []).filter((s) => queryNames.includes(s.query_name));
  const table = () => {
    const { header, rows } = toCsv(answer, formatValue, names);
    return numbersTable('numbers', header, rows);
  };
  const body =
    view.view === 'table'
      ? table()
      : el(
          'div',
          { className: 'charts' },
          ...spec.panels.map((p, i) => {
            const queryNames = p.queries.map((q) => q.name);
            const previous = view.group === '' ? seriesOf(answer.comparison?.data, queryNames) : [];
            return chart(p.title, seriesOf(answer.data, queryNames), previous, width, names, marked[i] ?? []);
          }),
        );
  return [
    controls(view, spec, apply),
    ...answer.meta.warnings.map((w) => el('p', { className: 'warning' }, w)),
    el(
      'p',
      { className: 'hint' },
      `${isoDay(view.start)} to ${isoDay(view.end - DAY)}; dashed: the previous period; shaded: the windows of insights`,
      ' ',
      download,
    ),
    body,
    el('h2', {}, 'Insights in this range'),
    insights.problem !== undefined
      ? problemView(insights.problem)
      : insightTable(shown, false, 'No insight in this range.'),
  ];
}
