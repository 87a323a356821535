/**
 * PostgreSQL's rollups of the sealed layout (migration 004): what the statistics sum instead of
 * reading every span of a skill's range, kept by sealing (sealing.ts) and retention in the same
 * transactions that change `skill_spans`, so a statement's snapshot sees both alike.
 *
 * - Marks (`skill_spans.firsts`): among the sealed spans of one (skill, trace) pair, one span has
 *   bit 0, and for each dimension of ROLLUP_DIMENSIONS one span per value has that dimension's
 *   bit. Sealing writes a pair's spans whole (a pair that is not special and gains spans, or any pair
 *   that gains a mapping, is rewritten), so the marks are over all of them. For a pair whose spans lie on one UTC day in one workspace,
 *   the number of marked spans in a group of one dimension (or of none) is the number of its
 *   traces there: COUNT(DISTINCT trace) becomes a sum.
 * - Special pairs (`skill_special`): the others (spans on several days or in several workspaces,
 *   more than MARKED_PAIR_SPANS spans, or cut by retention). Statistics subtract their marks
 *   (whatever they are) and count them from their rows, so a special pair that gains spans is not
 *   rewritten: its new spans are added with marks of their own.
 * - `skill_rollup`: per (skill, day, workspace, dimension values) the sums of the sealed spans'
 *   counts, tokens and marks, maintained as deltas (rows that reach zero spans are deleted).
 *   Costs are not summed here: floating-point sums kept as deltas would drift from the rows' sum.
 */

/** The dimensions whose marks the rollups keep, as span columns, each with its bit (1 << (index + 1)). */
const ROLLUP_DIMENSIONS = ['harness', 'skill', 'skill_version', 'command', 'mcp', 'tool', 'model', 'user_id'] as const;

/** Whether the rollups keep `column` (the dimensions added later, provider and agent, are read from rows). */
export const inRollups = (column: string): boolean => (ROLLUP_DIMENSIONS as readonly string[]).includes(column);

/** The mark bit of distinct traces grouped by `column` (null: not grouped). */
export function markBit(column: string | null): number {
  if (column === null) return 1;
  const i = (ROLLUP_DIMENSIONS as readonly string[]).indexOf(column);
  if (i < 0) throw new Error(`no marks for ${column}`);
  return 1 << (i + 1);
}

/** The rollup column counting the marks of `column` (null: distinct traces, not grouped). */
export const markColumn = (column: string | null): string => (column === null ? 'f_trace' : `f_${column}`);

/**
 * The marks of each row of a set holding every sealed span of its pairs (org_id, of_skill,
 * trace_key): a `row_number` window per bit, each an incremental sort after the first (an
 * `array_position` over the earlier rows' values took one sort but grew with the square of a
 * pair's spans).
 */
export function marksSql(): string {
  const pair = 'org_id, of_skill, trace_key';
  const bit = (partition: string, value: number) =>
    `CASE WHEN row_number() OVER (PARTITION BY ${partition}) = 1 THEN ${value} ELSE 0 END`;
  return [bit(pair, 1), ...ROLLUP_DIMENSIONS.map((c) => bit(`${pair}, ${c}`, markBit(c)))].join(' + ');
}

/**
 * The most sealed spans a pair may have and stay marked: a larger pair is special (counted from its
 * rows), so sealing never rewrites more than this many spans of a pair that gains spans.
 */
const MARKED_PAIR_SPANS = 1000;

const KEY = ['org_id', 'of_skill', 'day_s', 'workspace_id', ...ROLLUP_DIMENSIONS];
const SUMS: [string, string][] = [
  ['spans', 'COUNT(*)'],
  ['inv', 'COUNT(*) FILTER (WHERE is_invocation)'],
  ['err', 'COUNT(*) FILTER (WHERE is_invocation AND is_error)'],
  ['tool_calls', 'COUNT(*) FILTER (WHERE is_tool_call)'],
  ['tokens', 'COALESCE(SUM(tokens), 0)'],
  [markColumn(null), `COUNT(*) FILTER (WHERE firsts & 1 <> 0)`],
  ...ROLLUP_DIMENSIONS.map((c): [string, string] => [
    markColumn(c),
    `COUNT(*) FILTER (WHERE firsts & ${markBit(c)} <> 0)`,
  ]),
];

/** The columns of skill_spans a rollup delta reads from its rows. */
const SOURCE_COLUMNS = [
  'org_id',
  'of_skill',
  'trace_key',
  'workspace_id',
  'start_s',
  ...ROLLUP_DIMENSIONS,
  'is_invocation',
  'is_tool_call',
  'is_error',
  'tokens',
  'firsts',
];

/** The RETURNING list of a statement that writes or deletes skill_spans rows a rollup delta then reads (`alias`: the table's). */
export const rollupReturning = (alias?: string): string =>
  `RETURNING ${SOURCE_COLUMNS.map((c) => (alias === undefined ? c : `${alias}.${c}`)).join(', ')}`;

/**
 * Adds (sign 1) or subtracts (sign -1) the sums of the span rows of `from` (a CTE of skill_spans
 * rows with the columns of rollupReturning) to the rollups: one INSERT ... ON CONFLICT. `toolCalls`:
 * the rows' tool calls only, one each (rows a statement stopped counting as tool calls, whatever
 * `is_tool_call` they now show; they still count as spans, with their marks).
 */
export function rollupDeltaSql(from: string, sign: 1 | -1, toolCalls = false): string {
  const day = '(start_s / 86400) * 86400';
  const keys = KEY.map((k) => (k === 'day_s' ? `${day} AS day_s` : k));
  const sum = (c: string, sql: string) => (!toolCalls ? sql : c === 'tool_calls' ? 'COUNT(*)' : '0');
  const sums = SUMS.map(([c, sql]) => `${sign === 1 ? '' : '-'}${sum(c, sql)} AS ${c}`);
  return `INSERT INTO skill_rollup (${[...KEY, ...SUMS.map(([c]) => c)].join(', ')})
SELECT ${[...keys, ...sums].join(', ')} FROM ${from} GROUP BY ${KEY.map((k) => (k === 'day_s' ? day : k)).join(', ')}
ON CONFLICT ON CONSTRAINT skill_rollup_key DO UPDATE SET ${SUMS.map(([c]) => `${c} = skill_rollup.${c} + EXCLUDED.${c}`).join(', ')}`;
}

/**
 * Declares that this transaction keeps the rollups with what it writes to skill_spans: without it,
 * migration 004's trigger refuses the statement (an older release's sealing or retention).
 */
export const KEEPS_ROLLUPS = "SET LOCAL gateway.rollups = 'kept'";

/** Deletes the rollup rows that no span counts in any more. */
export const EMPTY_ROLLUPS_SQL = 'DELETE FROM skill_rollup WHERE spans = 0';

/** Keeps a special pair's [first_s, last_s] around every one of its spans the statement writes. */
const WIDEN = `ON CONFLICT (org_id, of_skill, trace_key) DO UPDATE SET first_s = LEAST(skill_special.first_s, EXCLUDED.first_s),
  last_s = GREATEST(skill_special.last_s, EXCLUDED.last_s)`;

/**
 * Records as special the pairs of `from` (rows holding every sealed span of their pairs, or new
 * spans of special pairs) whose spans lie on several UTC days or in several workspaces, or that
 * have more than MARKED_PAIR_SPANS spans, and widens the time range of every special pair among them.
 */
export function specialPairsSql(from: string): string {
  return `INSERT INTO skill_special (org_id, of_skill, trace_key, first_s, last_s)
SELECT w.org_id, w.of_skill, w.trace_key, MIN(w.start_s), MAX(w.start_s) FROM ${from} w
GROUP BY w.org_id, w.of_skill, w.trace_key
HAVING MIN(w.start_s / 86400) <> MAX(w.start_s / 86400) OR MIN(w.workspace_id) <> MAX(w.workspace_id)
  OR COUNT(*) > ${MARKED_PAIR_SPANS}
  OR EXISTS (SELECT 1 FROM skill_special p WHERE p.org_id = w.org_id AND p.of_skill = w.of_skill AND p.trace_key = w.trace_key)
${WIDEN}`;
}

/**
 * Records as special every pair of `gone` (sealed rows a statement deletes) with the time range of
 * its rows as the statement's snapshot sees them (the deleted ones included: a wider range is sound).
 */
export function cutPairsSql(gone: string): string {
  return `INSERT INTO skill_special (org_id, of_skill, trace_key, first_s, last_s)
SELECT k.org_id, k.of_skill, k.trace_key, MIN(k.start_s), MAX(k.start_s)
FROM skill_spans k JOIN (SELECT DISTINCT org_id, of_skill, trace_key FROM ${gone}) g
  ON g.org_id = k.org_id AND g.of_skill = k.of_skill AND g.trace_key = k.trace_key
GROUP BY k.org_id, k.of_skill, k.trace_key
${WIDEN}`;
}
