/**
 * CSV that is safe to open in a spreadsheet. Cells hold values users control (a model name, a tool
 * name, a query name), so two rules hold for every text cell:
 *
 * - RFC 4180 quoting: a cell holding `"`, `,`, a carriage return or a line feed is quoted, its `"`
 *   doubled. A bare carriage return matters as much as a line feed: spreadsheets end a row on
 *   either, so an unquoted `x\r=cmd|…` started a new row whose first cell was a formula. So is a
 *   cell holding `;` or a tab: spreadsheets of many locales split a CSV file on `;` (or sniff
 *   tabs), and an unquoted `x;=1+1` became a cell `=1+1` there; quoted, it stays one cell.
 * - CSV injection (OWASP): a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return
 *   is read as a formula (or, for the last two, may be trimmed into one), so it gets a leading `'`,
 *   which spreadsheets show as text; then it is quoted as above where needed.
 *
 * Numbers stay numbers: a finite JavaScript number is written by `String(n)` as `-?digits[.digits]
 * [e±digits]`, which every spreadsheet reads as a number literal and never as a formula, so a
 * negative measure is kept numeric (sums and charts still work on it). Only values typed as numbers
 * get that treatment: text that looks like a number is text and is neutralized like any other.
 */

/** A cell: text (user-controlled), a measure value, or empty. */
export type CsvCell = string | number | null;

const NEEDS_QUOTES = /[",;\t\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell as it goes into the file. */
export function csvCell(value: CsvCell): string {
  if (value === null) return '';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows as CSV text: cells joined by `,`, rows ended by `\n` (quoted cells keep their own line breaks). */
export function csvText(rows: readonly (readonly CsvCell[])[]): string {
  return rows.map((r) => `${r.map(csvCell).join(',')}\n`).join('');
}
