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

function labelOf(s: Series): string {
  const groups = Object.entries(s.groups ?? {}).map(([k, v]) => `${k}=${v === null ? 'none' : String(v)}`);
  return [s.query_name, ...groups].join(' ');
}

/** The bucket starts of the current series and one column per series (previous ones by position). */
export function stampsAndValues(series: Series[], previous: Series[]): { stamps: number[]; columns: Column[] } {
  const stamps = series[0]?.points.map((p) => p.timestamp_unix_seconds) ?? [];
  const columns: Column[] = series.map((s, i) => ({
    label: labelOf(s),
    values: s.points.map((p) => p.value),
    previous: false,
    colorIndex: i,
    unit: s.unit,
  }));
  previous.forEach((s, i) => {
    columns.push({
      label: `${labelOf(s)} (previous)`,
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
): { header: string[]; rows: (string | T)[][] } {
  const { stamps, columns } = stampsAndValues(answer.data.series, answer.comparison?.data.series ?? []);
  return {
    header: ['bucket_start_utc', ...columns.map((c) => c.label)],
    rows: stamps.map((t, k) => [
      new Date(t * 1000).toISOString().slice(0, 10),
      ...columns.map((c) => format(c.values[k] ?? null, c.unit)),
    ]),
  };
}
