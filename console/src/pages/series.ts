/**
 * Operation 1's time-series answer turned into what the analytics page draws: one column of values
 * per series over the buckets of the range, the previous period's series beside them (shifted onto
 * the same buckets, by position), and the same numbers as table rows and CSV.
 */
export interface Series {
  query_name: string;
  measure: string;
  unit: string | null;
  groups?: Record<string, string | number | null>;
  points: { timestamp_unix_seconds: number; value: number | null }[];
}

export interface StatsAnswer {
  data: { request_type: 'time_series'; series: Series[] };
  meta: { warnings: string[] };
  comparison: { start_time_unix_seconds: number; end_time_unix_seconds: number; data: { series: Series[] } } | null;
}

export interface Column {
  label: string;
  values: (number | null)[];
  previous: boolean;
  colorIndex: number;
  unit: string | null;
}

/**
 * What a group value is shown as, per dimension: registry ids (an agent's, a skill's) the page knows
 * by name. A value it does not know is shown as sent.
 */
export type GroupNames = Partial<Record<string, ReadonlyMap<string, string>>>;

/** Names by id, a name that several of them share followed by its id. */
export function namesById(items: readonly { id: string; name: string }[]): Map<string, string> {
  const count = new Map<string, number>();
  for (const i of items) count.set(i.name, (count.get(i.name) ?? 0) + 1);
  return new Map(items.map((i) => [i.id, (count.get(i.name) ?? 0) > 1 ? `${i.name} (${i.id})` : i.name]));
}

/** A group value as shown: `none` for null, a known id's name, else the value as sent. */
function groupValueText(names: GroupNames, dimension: string, v: string | number | null): string {
  if (v === null) return 'none';
  return names[dimension]?.get(String(v)) ?? String(v);
}

function labelOf(s: Series, names: GroupNames): string {
  const groups = Object.entries(s.groups ?? {}).map(([k, v]) => `${k}=${groupValueText(names, k, v)}`);
  return [s.query_name, ...groups].join(' ');
}

/** The bucket starts of the current series and one column per series (previous ones by position). */
export function stampsAndValues(
  series: Series[],
  previous: Series[],
  names: GroupNames = {},
): { stamps: number[]; columns: Column[] } {
  const stamps = series[0]?.points.map((p) => p.timestamp_unix_seconds) ?? [];
  const columns: Column[] = series.map((s, i) => ({
    label: labelOf(s, names),
    values: s.points.map((p) => p.value),
    previous: false,
    colorIndex: i,
    unit: s.unit,
  }));
  previous.forEach((s, i) => {
    columns.push({
      label: `${labelOf(s, names)} (previous)`,
      values: stamps.map((_, k) => s.points[k]?.value ?? null),
      previous: true,
      colorIndex: i,
      unit: s.unit,
    });
  });
  return { stamps, columns };
}

/**
 * The answer as rows: one per bucket (UTC day), one column per series and previous series; each
 * value through `format` with the column's unit (the table view's text, or the number itself for
 * the CSV download, csv.ts).
 */
export function toCsv<T>(
  answer: StatsAnswer,
  format: (value: number | null, unit: string | null) => T,
  names: GroupNames = {},
): { header: string[]; rows: (string | T)[][] } {
  const { stamps, columns } = stampsAndValues(answer.data.series, answer.comparison?.data.series ?? [], names);
  return {
    header: ['bucket_start_utc', ...columns.map((c) => c.label)],
    rows: stamps.map((t, k) => [
      new Date(t * 1000).toISOString().slice(0, 10),
      ...columns.map((c) => format(c.values[k] ?? null, c.unit)),
    ]),
  };
}

/** Operation 1's table answer. */
export interface TableAnswer {
  data: {
    request_type: 'table';
    columns: { name: string; column_type: 'group' | 'measure'; unit: string | null }[];
    rows: { groups: Record<string, string | number | null>; values: Record<string, number | null> }[];
  };
  meta: { warnings: string[] };
}

/** A table answer as text: its columns' names as header, a row per group (values through `format`). */
export function tableText(
  answer: TableAnswer,
  format: (value: number | null, unit: string | null) => string,
  names: GroupNames = {},
): { header: string[]; rows: string[][] } {
  const { columns, rows } = answer.data;
  return {
    header: columns.map((c) => c.name),
    rows: rows.map((r) =>
      columns.map((c) =>
        c.column_type === 'group'
          ? groupValueText(names, c.name, r.groups[c.name] ?? null)
          : format(r.values[c.name] ?? null, c.unit),
      ),
    ),
  };
}
