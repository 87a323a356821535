/**
 * Nested insight lists cost one store call per query level, measured on a real SQLite store
 * wrapped in a counting Proxy: `insights` under 1 agent or under 20 makes the same calls, one
 * `listInsightPages` for them all; each agent's page is its own (newest first, `first` items,
 * `hasNextPage` right), and the next pages of every agent, each after its own cursor, are again one
 * call. Workspace feeds under a list of workspaces likewise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InsightRecord } from '../../src/store/insight-port.ts';
import { insightRecord, newestFirst } from '../fixtures/insights.ts';
import { wideBundle } from '../fixtures/wide-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { countingStore, gql } from './helpers.ts';

const BASE = 1_790_000_000;
const WORKSPACES = ['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other'];
const agentId = (i: number) => `ag-w${String(i).padStart(4, '0')}`;

/** Agent i has i % 6 insights (some none, some several pages), in the workspaces the admin reads. */
const records: InsightRecord[] = [];
for (let i = 0; i < 30; i++)
  for (let k = 0; k < i % 6; k++)
    records.push(
      insightRecord(
        `in-${agentId(i)}-${k}`,
        'latency_regression',
        { type: 'agent', id: agentId(i) },
        WORKSPACES[(i + k) % WORKSPACES.length] ?? 'ws-a',
        // Pairs share a window end, so ties go by id.
        BASE - Math.floor(k / 2) * 3600,
      ),
    );

const counter = countingStore();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    bundle: wideBundle(30),
    wrapRegistry: (store) => counter.wrap(store),
    // Each query runs: the calls of an execution are measured, not those of a cached answer.
    env: { RESPONSE_CACHE_ENTRIES: '0' },
  });
  expect(await t.registry.insights.recordInsights(records, Date.now())).toHaveLength(records.length);
});
afterAll(async () => {
  await t.close();
});

/** The ids of an agent's insights, newest first. */
const insightsOf = (id: string) =>
  records
    .filter((r) => r.subject.id === id)
    .sort(newestFirst)
    .map((r) => r.id);

type Page = { nodes: { id: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };

/** The store calls of one query, in the steady state (the org tree and membership caches warm). */
async function callsFor(query: string, variables: Record<string, unknown> = {}) {
  await gql(t, query, variables);
  counter.reset();
  const res = await gql(t, query, variables);
  expect(res.errors).toBeUndefined();
  return { data: res.data, calls: counter.calls() };
}

const AGENTS = `query($n: Int) { agentSearch(first: $n, sorts: [{ field: NAME }]) { nodes {
  id insights(first: 2) { nodes { id } pageInfo { hasNextPage endCursor } } } } }`;

describe('store calls of nested insight lists', () => {
  it('insights under 1 agent or 20 agents: the same calls, one insight query', async () => {
    const one = await callsFor(AGENTS, { n: 1 });
    const twenty = await callsFor(AGENTS, { n: 20 });
    const nodes = twenty.data.agentSearch.nodes as { id: string; insights: Page }[];
    expect(nodes).toHaveLength(20);
    expect(one.data.agentSearch.nodes).toHaveLength(1);
    expect(twenty.calls['insights.listInsightPages']).toBe(1);
    expect(twenty.calls['insights.listInsights']).toBeUndefined();
    expect(twenty.calls).toEqual(one.calls);
    const wide = nodes.filter((n) => n.id.startsWith('ag-w'));
    expect(wide.length).toBeGreaterThan(15);
    for (const n of wide) {
      expect(n.insights.nodes.map((x) => x.id)).toEqual(insightsOf(n.id).slice(0, 2));
      expect(n.insights.pageInfo.hasNextPage).toBe(insightsOf(n.id).length > 2);
    }
  });

  it('the next pages of every agent, each after its own cursor, are one call per round', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => agentId(i));
    const seen = new Map<string, string[]>(ids.map((id) => [id, []]));
    let after = new Map<string, string | null>(ids.map((id) => [id, null]));
    for (let round = 0; after.size > 0 && round < 5; round++) {
      const asked = [...after.entries()];
      const fields = asked.map(
        ([id], i) =>
          `a${i}: agent(id: "${id}") { insights(first: 2, after: $c${i}) { nodes { id } pageInfo { hasNextPage endCursor } } }`,
      );
      const query = `query(${asked.map((_, i) => `$c${i}: String`).join(', ')}) { ${fields.join(' ')} }`;
      const { data, calls } = await callsFor(
        query,
        Object.fromEntries(asked.map(([, cursor], i) => [`c${i}`, cursor])),
      );
      expect(calls['insights.listInsightPages']).toBe(1);
      const next = new Map<string, string | null>();
      for (const [i, [id]] of asked.entries()) {
        const page = data[`a${i}`].insights as Page;
        seen.get(id)?.push(...page.nodes.map((n) => n.id));
        if (page.pageInfo.hasNextPage) next.set(id, page.pageInfo.endCursor);
      }
      after = next;
    }
    expect(after.size).toBe(0);
    for (const id of ids) expect(seen.get(id)).toEqual(insightsOf(id));
  });

  it('feeds under a list of workspaces: one insight query, each feed its own', async () => {
    const FEEDS = '{ workspace(id: "ws-a") { subtree { id insights(first: 3) { nodes { id } } } } }';
    const { data, calls } = await callsFor(FEEDS);
    const subtree = data.workspace.subtree as { id: string; insights: { nodes: { id: string }[] } }[];
    expect(subtree.map((w) => w.id).sort()).toEqual([...WORKSPACES].sort());
    expect(calls['insights.listInsightPages']).toBe(1);
    for (const w of subtree) {
      const alone = await gql(t, `{ workspace(id: "${w.id}") { insights(first: 3) { nodes { id } } } }`);
      expect(w.insights.nodes).toEqual(alone.data.workspace.insights.nodes);
      expect(w.insights.nodes).toHaveLength(3);
    }
  });
});
