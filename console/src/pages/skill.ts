/**
 * Skill analytics: time series of invocations, traces, error rate, latency p50/p90/p99, tokens and
 * cost for a range (presets or custom dates), bucket, version and group-by (agents that declare
 * the skill shown by name), with the previous
 * period overlaid (ungrouped); the same numbers as a table and as CSV. One REST call (operation 1,
 * time_series with compare) answers the page; the choices live in the URL, so every view has a link.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { graphql, rest } from '../api.ts';
import { el, empty, formatValue, loading, navigate, problemView } from '../dom.ts';
import type { SkillHeadQuery } from '../generated/operations.ts';
import SKILL from '../queries/skill.graphql';
import { csvText } from './csv.ts';
import { namesById, stampsAndValues, toCsv, type GroupNames, type Series, type StatsAnswer } from './series.ts';

const DAY = 86_400;
const PANELS: { title: string; queries: { name: string; measure: string }[] }[] = [
  { title: 'Invocations', queries: [{ name: 'invocations', measure: 'skill_invocations' }] },
  { title: 'Traces', queries: [{ name: 'traces', measure: 'traces' }] },
  { title: 'Error rate', queries: [{ name: 'error_rate', measure: 'error_rate' }] },
  {
    title: 'Latency',
    queries: [
      { name: 'p50', measure: 'latency_p50' },
      { name: 'p90', measure: 'latency_p90' },
      { name: 'p99', measure: 'latency_p99' },
    ],
  },
  { title: 'Tokens', queries: [{ name: 'tokens', measure: 'tokens' }] },
  { title: 'Cost', queries: [{ name: 'cost', measure: 'cost' }] },
];
const GROUPS = ['', 'model', 'provider', 'agent', 'harness', 'tool', 'mcp', 'user', 'command', 'skill_version'];
const PRESETS = { '7d': 7, '30d': 30, '90d': 90 } as const;
const COLORS = ['#0b5cad', '#c4432b', '#2f8f46', '#8250df', '#b7791f'];

/** The page's choices, from the URL (defaults: 7 days, automatic bucket, no group). */
interface View {
  range: string;
  start: number;
  end: number;
  bucket: string;
  group: string;
  version: string;
  view: 'charts' | 'table';
}

function viewOf(query: URLSearchParams): View {
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
    group: GROUPS.includes(query.get('group') ?? '') ? (query.get('group') ?? '') : '',
    version: /^\d+$/.test(query.get('version') ?? '') ? (query.get('version') ?? '') : '',
    view: query.get('view') === 'table' ? 'table' : 'charts',
  };
}

const isoDay = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);

function controls(view: View, apply: (changes: Record<string, string>) => void): HTMLElement {
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
      GROUPS.map((g) => [g, g === '' ? 'none' : g]),
      view.group,
    ),
    el('label', {}, 'version ', version),
    toggle,
  );
}

function request(view: View): object {
  return {
    start_time_unix_seconds: view.start,
    end_time_unix_seconds: view.end,
    request_type: 'time_series',
    compare: 'previous_period',
    ...(view.bucket !== '' ? { bucket: view.bucket } : {}),
    queries: PANELS.flatMap((p) =>
      p.queries.map((q) => ({ ...q, ...(view.group !== '' ? { group_by: [view.group], limit: 5 } : {}) })),
    ),
  };
}

function chart(title: string, series: Series[], previous: Series[], width: number, names: GroupNames): HTMLElement {
  const { stamps, columns } = stampsAndValues(series, previous, names);
  const box = el('figure', { className: 'chart', 'data-title': title });
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
    axes: [{}, { size: 70, values: (_u, vals) => vals.map((v) => formatValue(v, series[0]?.unit ?? null)) }],
  };
  new uPlot(opts, [stamps, ...columns.map((c) => c.values)], box);
  return box;
}

function tableView(answer: StatsAnswer, names: GroupNames): HTMLElement {
  const { header, rows } = toCsv(answer, formatValue, names);
  return el(
    'div',
    { className: 'scroll' },
    el(
      'table',
      { className: 'numbers' },
      el('thead', {}, el('tr', {}, ...header.map((h) => el('th', {}, h)))),
      el(
        'tbody',
        {},
        ...rows.map((r) => el('tr', {}, ...r.map((v, i) => el('td', { className: i === 0 ? '' : 'num' }, v)))),
      ),
    ),
  );
}

export async function skillPage(main: HTMLElement, skillId: string, query: URLSearchParams): Promise<void> {
  const view = viewOf(query);
  main.replaceChildren(loading());
  const version = view.version !== '' ? `?version_ordinal=${view.version}` : '';
  const [head, stats] = await Promise.all([
    graphql<SkillHeadQuery>(SKILL, { id: skillId }),
    rest<StatsAnswer>(
      'POST',
      `/skill/v1/skills/${encodeURIComponent(skillId)}/traces/stats/query${version}`,
      request(view),
    ),
  ]);
  const skill = head.data?.skill;
  const title = el('h1', {}, skill?.displayName ?? skill?.name ?? skillId);
  const sub = skill?.workspace
    ? el('p', { className: 'hint' }, `${skill.id} in ${skill.workspace.displayName}, version ${skill.versionOrdinal}`)
    : '';
  const apply = (changes: Record<string, string>) => {
    const next = new URLSearchParams(query);
    for (const [k, v] of Object.entries(changes)) {
      if (v === '') next.delete(k);
      else next.set(k, v);
    }
    navigate(`${location.pathname}?${next.toString()}`);
  };
  if (stats.problem !== undefined) {
    main.replaceChildren(title, sub, controls(view, apply), problemView(stats.problem));
    return;
  }
  const answer = stats.data;
  // Agents that declare they use the skill, by name (the agent dimension holds registry ids).
  const names: GroupNames = {
    agent: namesById((skill?.usedBy ?? []).map((a) => ({ id: a.id, name: a.displayName ?? a.name }))),
  };
  const download = el('a', { className: 'button', download: `${skillId}-stats.csv`, href: '#' }, 'Download CSV');
  download.addEventListener('click', () => {
    const { header, rows } = toCsv(answer, (v) => v, names);
    download.href = URL.createObjectURL(new Blob([csvText([header, ...rows])], { type: 'text/csv' }));
  });
  const width = Math.max(280, Math.min(main.clientWidth || 900, 960) - 24);
  const seriesOf = (data: { series: Series[] } | undefined, names: string[]) =>
    (data?.series ?? []).filter((s) => names.includes(s.query_name));
  const body =
    view.view === 'table'
      ? tableView(answer, names)
      : el(
          'div',
          { className: 'charts' },
          ...PANELS.map((p) => {
            const queryNames = p.queries.map((q) => q.name);
            const previous = view.group === '' ? seriesOf(answer.comparison?.data, queryNames) : [];
            return chart(p.title, seriesOf(answer.data, queryNames), previous, width, names);
          }),
        );
  main.replaceChildren(
    title,
    sub,
    controls(view, apply),
    ...answer.meta.warnings.map((w) => el('p', { className: 'warning' }, w)),
    el(
      'p',
      { className: 'hint' },
      `${isoDay(view.start)} to ${isoDay(view.end - DAY)}; dashed: the previous period`,
      ' ',
      download,
    ),
    body,
  );
}
