/**
 * The DuckDB trace schema, as ordered migrations applied once each at open (never edited once
 * released: add a new one). Version 2 numbers spans in ingestion order (`seq`), keys traces by
 * their 128-bit id (`trace_key`), stores low-cardinality dimensions as codes of `dim_values`
 * (dictionary.ts) and adds `skill_spans`, the spans of each skill's traces,
 * materialized by sealing (sealing.ts) and sorted by skill key and time, so that a statistics query
 * reads one skill's rows only.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlText } from '../sql-values.ts';

/** The 32 hex digits of an OTLP trace id as a UHUGEINT (two 64-bit halves). */
const hexToKey = (col: string) =>
  `((('0x' || substr(${col}, 1, 16))::UBIGINT::UHUGEINT << 64) | ('0x' || substr(${col}, 17, 16))::UBIGINT::UHUGEINT)`;

/**
 * Span columns shared by `spans` and `skill_spans`, after their leading columns; then the category.
 * harness, skill, command, mcp, tool and model hold codes of `dim_values` (dictionary.ts).
 */
const SPAN_DIMS = `start_s BIGINT NOT NULL, harness INTEGER, skill INTEGER, skill_version INTEGER, command INTEGER, mcp INTEGER,
  tool INTEGER, model INTEGER, user_id VARCHAR, session_id VARCHAR`;
const ENCODED = ['harness', 'skill', 'command', 'mcp', 'tool', 'model'];
/** The version 1 column `col` as its code. */
const code = (col: string) => `(SELECT id FROM dim_values WHERE value = v1.${col})`;
const SPAN_MEASURES =
  'is_error BOOLEAN NOT NULL, tokens BIGINT NOT NULL, cost DOUBLE NOT NULL, duration_ms DOUBLE NOT NULL';

/** The column order of `spans` (trace-store.ts appends in this order). */
const SPAN_COLUMNS = [
  'seq',
  'org_id',
  'workspace_id',
  'trace_key',
  'span_id',
  'parent_span_id',
  'name',
  'start_s',
  'harness',
  'skill',
  'skill_version',
  'command',
  'mcp',
  'tool',
  'model',
  'user_id',
  'session_id',
  'category',
  'is_error',
  'tokens',
  'cost',
  'duration_ms',
] as const;

const SPAN_DATA_NAMES = SPAN_COLUMNS.slice(SPAN_COLUMNS.indexOf('start_s')).join(', ');

const MIGRATIONS: [string, string][] = [
  [
    '001_spans',
    `
CREATE TABLE spans (
  org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, trace_id VARCHAR NOT NULL, span_id VARCHAR NOT NULL,
  parent_span_id VARCHAR, name VARCHAR, start_s BIGINT NOT NULL, duration_ms DOUBLE NOT NULL, category VARCHAR NOT NULL,
  harness VARCHAR, skill VARCHAR, skill_version INTEGER, command VARCHAR, mcp VARCHAR, tool VARCHAR, model VARCHAR,
  user_id VARCHAR, session_id VARCHAR, tokens BIGINT NOT NULL, cost DOUBLE NOT NULL, is_error BOOLEAN NOT NULL);
CREATE TABLE trace_skills (org_id VARCHAR NOT NULL, skill VARCHAR NOT NULL, skill_version INTEGER, trace_id VARCHAR NOT NULL, start_s BIGINT NOT NULL);`,
  ],
  [
    '002_sealed_skill_spans',
    `
CREATE TABLE spans_v2 (seq BIGINT NOT NULL, org_id VARCHAR NOT NULL, workspace_id VARCHAR NOT NULL, trace_key UHUGEINT NOT NULL,
  span_id VARCHAR NOT NULL, parent_span_id VARCHAR, name VARCHAR, ${SPAN_DIMS}, category VARCHAR NOT NULL, ${SPAN_MEASURES});
CREATE TABLE dim_values (id INTEGER NOT NULL, value VARCHAR NOT NULL);
INSERT INTO dim_values SELECT row_number() OVER (ORDER BY value)::INTEGER, value
  FROM (${ENCODED.map((c) => `SELECT ${c} AS value FROM spans`).join(' UNION ')}) WHERE value IS NOT NULL;
-- Version 1 only ever appended, so rowid is unique and in ingestion order: a streaming copy.
INSERT INTO spans_v2 SELECT rowid + 1, org_id, workspace_id, ${hexToKey('trace_id')}, span_id, parent_span_id, name,
  ${SPAN_DATA_NAMES.split(', ')
    .map((c) => (ENCODED.includes(c) ? code(c) : c))
    .join(', ')} FROM spans v1;
DROP TABLE spans;
ALTER TABLE spans_v2 RENAME TO spans;
CREATE TABLE trace_skills_v2 (seq BIGINT NOT NULL, org_id VARCHAR NOT NULL, trace_key UHUGEINT NOT NULL, skill VARCHAR NOT NULL,
  skill_version INTEGER, start_s BIGINT NOT NULL);
INSERT INTO trace_skills_v2 SELECT 0, org_id, ${hexToKey('trace_id')}, skill, skill_version, start_s FROM trace_skills;
DROP TABLE trace_skills;
ALTER TABLE trace_skills_v2 RENAME TO trace_skills;
-- One integer per (organization, skill): zone maps keep only an 8-byte prefix of a string, too
-- short to tell ids like skill-0001 and skill-0013 apart, but prune exactly on integers.
CREATE TABLE skill_keys (org_id VARCHAR NOT NULL, skill VARCHAR NOT NULL, key INTEGER NOT NULL);
CREATE TABLE skill_spans (of_key INTEGER NOT NULL, of_versions INTEGER[] NOT NULL, workspace_id VARCHAR NOT NULL,
  trace_key UHUGEINT NOT NULL, ${SPAN_DIMS}, is_invocation BOOLEAN NOT NULL, is_tool_call BOOLEAN NOT NULL, ${SPAN_MEASURES});
-- The days each sealed step put a (skill, trace) pair's rows on, and the pairs whose rows span more
-- than one UTC day: the only traces a day or week bucket can split (see stats-sql.ts totals).
CREATE TABLE skill_trace_days (of_key INTEGER NOT NULL, trace_key UHUGEINT NOT NULL, min_day INTEGER NOT NULL, max_day INTEGER NOT NULL);
CREATE TABLE skill_crossing (of_key INTEGER NOT NULL, trace_key UHUGEINT NOT NULL);
CREATE TABLE sealed (seq BIGINT NOT NULL);
INSERT INTO sealed VALUES (0);`,
  ],
];

/** Applies the migrations not yet recorded in `schema_migrations`, each in its own transaction. */
export async function migrate(
  conn: DuckDBConnection,
  notice: (message: string) => void = () => undefined,
): Promise<void> {
  await conn.run('CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)');
  const done = new Set(
    (await conn.runAndReadAll('SELECT name FROM schema_migrations')).getRowObjectsJS().map((r) => sqlText(r.name)),
  );
  for (const [name, sql] of MIGRATIONS) {
    if (done.has(name)) continue;
    // A fresh file migrates in milliseconds; an existing one rewrites its spans (~5 s per million).
    if (done.size > 0) notice(`migrating the trace store to ${name} (once; existing spans are rewritten)`);
    await conn.run('BEGIN TRANSACTION');
    try {
      await conn.run(sql);
      await conn.run('INSERT INTO schema_migrations VALUES ($1, now())', [name]);
      await conn.run('COMMIT');
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }
}
