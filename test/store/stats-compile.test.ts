/**
 * The SQL the statistics compiler produces, per dialect, as snapshots (__snapshots__/): a reviewer
 * of a change to src/store/stats/ (compile.ts, ranking.ts, dialect.ts…) sees what will run on each engine.
 * The DuckDB text comes from a real store (a sealed skill, its dictionary codes); the PostgreSQL text
 * from the engine's own row source. Whether the SQL answers correctly is the contract suites' job.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDbTraceStore } from '../../src/store/duckdb/trace-store.ts';
import { agentRows } from '../../src/store/postgres/agent-rows.ts';
import { skillRows } from '../../src/store/postgres/skill-rows.ts';
import { POSTGRES } from '../../src/store/stats/dialect.ts';
import { compileAggregate } from '../../src/store/stats/compile.ts';
import type { AggregateQuery } from '../../src/store/trace-port.ts';
import { demoSpans } from '../../src/seed/demo-traces.ts';

const END = Date.UTC(2026, 10, 1) / 1000;
const base = {
  orgId: 'org-1',
  subject: { skill: 'sk-a' },
  startS: END - 7 * 86400,
  endS: END,
  workspaceIds: ['ws-1', 'ws-2'],
  filters: [],
  groupBy: [],
} satisfies Partial<AggregateQuery>;

const QUERIES: Record<string, AggregateQuery> = {
  'scalar: spans, error rate, p99 latency': { ...base, measures: ['spans', 'error_rate', 'latency_p99'] },
  'time series by model, daily, top 5 by spans': {
    ...base,
    groupBy: ['model'],
    measures: ['spans', 'traces'],
    bucket: 'day',
    top: [{ by: 'spans', direction: 'desc', limit: 5 }],
  },
  'table by tool and user, tool filter, ranked by tool name': {
    ...base,
    filters: [{ key: 'tool', op: 'in', values: ['search', 'fetch'] }],
    groupBy: ['tool', 'user'],
    measures: ['tool_calls', 'latency_p50'],
    top: [{ by: 'tool', direction: 'asc', limit: 10 }],
  },
  'harness measures: lines added and sessions by user': {
    ...base,
    groupBy: ['user'],
    measures: ['lines_added', 'sessions'],
  },
  'harness measures: daily commits by model': {
    ...base,
    groupBy: ['model'],
    measures: ['commits', 'spans'],
    bucket: 'day',
  },
  'evaluation measures: score and traces by model': {
    ...base,
    groupBy: ['model'],
    measures: ['evaluation_score', 'traces'],
  },
  'evaluation measures: daily score and pass rate by evaluation, one name out': {
    ...base,
    filters: [{ key: 'evaluation', op: 'neq', values: ['toxicity'] }],
    groupBy: ['evaluation'],
    measures: ['evaluation_score', 'evaluation_pass_rate'],
    bucket: 'day',
  },
};

let dir: string;
let duck: DuckDbTraceStore;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-stats-compile-'));
  duck = await DuckDbTraceStore.open(path.join(dir, 'traces.duckdb'), { sealEveryMs: 0 });
  for (const batch of demoSpans({
    orgId: 'org-1',
    skills: [{ id: 'sk-a', workspaceId: 'ws-1' }],
    users: ['u1'],
    spans: 200,
    endS: END,
    days: 3,
  }))
    await duck.insertSpans(batch);
  await duck.seal();
});

afterAll(async () => {
  await duck.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('compiled statistics SQL', () => {
  for (const [name, query] of Object.entries(QUERIES)) {
    it(`duckdb: ${name}`, async () => {
      expect(await duck.compile(query)).toMatchSnapshot();
    });
    it(`postgres: ${name}`, () => {
      const rows = skillRows(
        { skill: 'sk-a' },
        { watermark: '1000', unsealedSpans: true, unsealedMappings: true, rollups: true },
      );
      expect(compileAggregate(query, rows, POSTGRES)).toMatchSnapshot();
    });
  }
});

describe("compiled SQL of an agent's statistics", () => {
  // A shape PostgreSQL sums from its rollups for a skill: one dimension, counts and distinct traces.
  const query: AggregateQuery = {
    ...base,
    subject: { agent: 'agent-1' },
    groupBy: ['model'],
    measures: ['traces', 'spans', 'tokens'],
    bucket: 'day',
  };
  const sealed = { watermark: '1000', unsealedSpans: false, unsealedMappings: false, rollups: true };

  it("duckdb: the spans of the range semi-joined to the agent's traces", async () => {
    const compiled = await duck.compile(query);
    expect(compiled.sql).toContain('trace_agents');
    expect(compiled.sql).not.toContain('skill_spans');
    expect(compiled).toMatchSnapshot();
  });

  it('postgres: the same, never the per-skill layout or its rollups (which a skill of this shape sums)', () => {
    const compiled = compileAggregate(query, agentRows({ agent: 'agent-1' }), POSTGRES);
    expect(compiled.sql).toContain('trace_agents');
    expect(compiled.sql).not.toMatch(/skill_spans|skill_rollup|skill_special/);
    expect(compiled).toMatchSnapshot();
    const skill = { ...query, subject: { skill: 'sk-a' } };
    expect(compileAggregate(skill, skillRows({ skill: 'sk-a' }, sealed), POSTGRES).sql).toContain('skill_rollup');
  });
});
