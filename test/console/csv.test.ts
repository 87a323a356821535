/**
 * The console's CSV download (console/src/pages/csv.ts) read back the way a spreadsheet reads it:
 * a row ends at a carriage return or a line feed outside quotes, and a cell starting with `=`, `+`,
 * `-`, `@`, a tab or a carriage return is a formula. Hostile values, the model name that opened a
 * calculator among them, stay in their cell and are text.
 */
import { describe, expect, it } from 'vitest';
import { csvCell, csvText } from '../../console/src/pages/csv.ts';
import { toCsv, type StatsAnswer } from '../../console/src/pages/series.ts';

/**
 * RFC 4180 as spreadsheets apply it: quotes group, `""` is a quote, CR, LF or CRLF end a row, and
 * `separator` splits cells (`,`; many locales' spreadsheets split on `;`).
 */
function readCsv(text: string, separator = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === separator) {
      row.push(cell);
      cell = '';
    } else if (c === '\r' || c === '\n') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** What a spreadsheet evaluates: a formula start, unless the whole cell is a number literal (`-2`). */
const isFormula = (cell: string) => /^[=+\-@\t\r]/.test(cell) && !/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(cell);

const CALC = "x\r=cmd|' /C calc'!A0";
const HOSTILE = [
  CALC,
  "=cmd|' /C calc'!A0",
  '+1+cmd|x',
  "-2+3+cmd|' /C calc'!A0",
  '@SUM(1+1)*cmd|x',
  '\t=1+1',
  '\r=1+1',
  'a,b',
  'say "hi"',
  'line\nbreak',
  'cr\rlf\r\n',
  '"=quoted"',
  '-5',
  '',
  'plain text',
  'ünï©ødé \u2028',
  'x;=1+1',
  'x ;@SUM(1+1)',
  'a\t=1+1',
];

describe('csvCell', () => {
  it('the model name with a bare carriage return: one quoted cell, read back as text', () => {
    expect(csvCell(CALC)).toBe(`"x\r=cmd|' /C calc'!A0"`);
    expect(
      readCsv(
        csvText([
          ['model', 'calls'],
          [CALC, 3],
        ]),
      ),
    ).toEqual([
      ['model', 'calls'],
      [CALC, '3'],
    ]);
  });

  it('neutralizes formula starts with a single quote, quoting where the cell needs it', () => {
    expect(csvCell("=cmd|' /C calc'!A0")).toBe("'=cmd|' /C calc'!A0");
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\t=1')).toBe('"\'\t=1"');
    expect(csvCell('\r=1')).toBe(`"'\r=1"`);
    expect(csvCell('=1,2')).toBe(`"'=1,2"`);
    expect(csvCell('=say "hi"')).toBe(`"'=say ""hi"""`);
    // Text that looks like a negative number is still text.
    expect(csvCell('-5')).toBe("'-5");
  });

  it('quotes a cell holding a quote, a comma, a semicolon, a tab, a carriage return or a line feed, and nothing else', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('a;b')).toBe('"a;b"');
    expect(csvCell('a\tb')).toBe('"a\tb"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('a\rb')).toBe('"a\rb"');
    expect(csvCell('a\nb')).toBe('"a\nb"');
    expect(csvCell('a b|c')).toBe('a b|c');
    expect(csvCell('')).toBe('');
    expect(csvCell(null)).toBe('');
  });

  it('keeps measure values numeric, negative ones included; a non-finite number is text', () => {
    expect(csvCell(-1.5)).toBe('-1.5');
    expect(csvCell(0)).toBe('0');
    expect(csvCell(-1e-7)).toBe('-1e-7');
    expect(csvCell(1e21)).toBe('1e+21');
    expect(csvCell(Number.NEGATIVE_INFINITY)).toBe("'-Infinity");
  });

  it('every hostile value stays in its own cell, and no cell read back is a formula', () => {
    const rows = [HOSTILE, HOSTILE.map((v, i) => `${i}${v}`), [...HOSTILE].reverse()];
    const read = readCsv(csvText(rows));
    expect(read).toHaveLength(rows.length);
    read.forEach((r, i) => {
      expect(r).toHaveLength(HOSTILE.length);
      r.forEach((cell, k) => {
        const sent = rows[i]?.[k] as string;
        expect(isFormula(cell), JSON.stringify(cell)).toBe(false);
        expect(cell).toBe(/^[=+\-@\t\r]/.test(sent) ? `'${sent}` : sent);
      });
    });
  });

  it('read by a spreadsheet that splits on semicolons, no value starts a cell of its own, nor a formula', () => {
    const rows = [HOSTILE, HOSTILE.map((v, i) => `${i}${v}`), [...HOSTILE].reverse()];
    const read = readCsv(csvText(rows), ';');
    expect(read).toHaveLength(rows.length);
    // No unquoted semicolon: each line is one cell there, and it is no formula.
    for (const r of read) {
      expect(r).toHaveLength(1);
      expect(isFormula(r[0] as string), JSON.stringify(r[0])).toBe(false);
    }
  });
});

describe('the skill page download: a statistics answer grouped by model', () => {
  const series = (model: string | null, values: (number | null)[]) => ({
    query_name: 'traces',
    measure: 'traces',
    unit: null,
    groups: { model },
    points: values.map((value, k) => ({ timestamp_unix_seconds: 1_767_225_600 + k * 86_400, value })),
  });
  const answer: StatsAnswer = {
    data: {
      request_type: 'time_series',
      series: [series(CALC, [3, null]), series('=HYPERLINK("http://x")', [-2, 5]), series(null, [1, 1])],
    },
    meta: { warnings: [] },
    comparison: null,
  };

  it('one row per bucket, hostile model names inside their header cells, numbers as numbers', () => {
    const { header, rows } = toCsv(answer, (v) => v);
    const read = readCsv(csvText([header, ...rows]));
    expect(read).toEqual([
      ['bucket_start_utc', `traces model=${CALC}`, 'traces model==HYPERLINK("http://x")', 'traces model=none'],
      ['2026-01-01', '3', '-2', '1'],
      ['2026-01-02', '', '5', '1'],
    ]);
    for (const r of read) for (const cell of r) expect(isFormula(cell)).toBe(false);
  });
});
