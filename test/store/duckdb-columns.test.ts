/**
 * The column lists of src/store/duckdb/columns.ts are what appends and sealing write by position;
 * the tables come from the frozen migrations. They must agree, column for column.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EVALUATIONS_COLUMNS,
  METRIC_POINTS_COLUMNS,
  SKILL_SPANS_COLUMNS,
  SPANS_COLUMNS,
  TRACE_AGENTS_COLUMNS,
  TRACE_SKILLS_COLUMNS,
} from '../../src/store/duckdb/columns.ts';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';

let dir: string;
let store: DuckDbTraceStore;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-columns-'));
  store = await DuckDbTraceStore.open(path.join(dir, 'traces.duckdb'));
});

afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function describeTable(table: string): Promise<string[]> {
  const rows = await store.withConnection(async (conn) =>
    (await conn.runAndReadAll(`DESCRIBE ${table}`)).getRowObjectsJS(),
  );
  return rows.map((r) => r.column_name as string);
}

describe('DuckDB column order, declared once', () => {
  it.each([
    ['spans', SPANS_COLUMNS],
    ['skill_spans', SKILL_SPANS_COLUMNS],
    ['trace_skills', TRACE_SKILLS_COLUMNS],
    ['trace_agents', TRACE_AGENTS_COLUMNS],
    ['metric_points', METRIC_POINTS_COLUMNS],
    ['evaluations', EVALUATIONS_COLUMNS],
  ] as const)('%s has the declared columns in the declared order', async (table, declared) => {
    expect(await describeTable(table)).toEqual([...declared]);
  });
});
