/** Numbers as the console prints them: no DOM here, so the tests run it in Node. */

/** A number as the console prints it: `–` for none, ratios as percentages, small values with decimals. */
export function formatValue(value: number | null, unit: string | null): string {
  if (value === null) return '–';
  if (unit === 'ratio') return `${(value * 100).toFixed(1)} %`;
  if (unit === 'usd') return `$${value.toFixed(value < 1 ? 4 : 2)}`;
  if (unit === 'ms') return `${Math.round(value).toLocaleString('en-US')} ms`;
  return Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(2);
}
