/**
 * The `kind` argument of GraphQL's insight lists reaches the store as REST's does: each kind once,
 * so at most the six of the enum however long the list sent (5,000 repeats of two kinds are two).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InsightPagesQuery } from '../../src/store/insight-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { insightRecord } from '../fixtures/insights.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { gql } from './helpers.ts';

const BASE = 1_790_000_000;
const asked: InsightPagesQuery[] = [];

/** The store with `insights.listInsightPages` recording what it is asked. */
const recording = (store: RegistryStore): RegistryStore =>
  new Proxy(store, {
    get(object, prop, receiver) {
      const value = Reflect.get(object, prop, receiver) as unknown;
      if (prop !== 'insights') return value;
      return new Proxy(value as RegistryStore['insights'], {
        get(insights, name, r) {
          const method = Reflect.get(insights, name, r) as unknown;
          if (name !== 'listInsightPages' || typeof method !== 'function') return method;
          return (query: InsightPagesQuery) => {
            asked.push(query);
            return (method as (q: InsightPagesQuery) => unknown).call(insights, query);
          };
        },
      });
    },
  });

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ wrapRegistry: recording, env: { RESPONSE_CACHE_ENTRIES: '0' } });
  const records = (['cost_spike', 'latency_regression', 'usage_summary'] as const).map((kind, i) =>
    insightRecord(`in-${kind}`, kind, { type: 'skill', id: 'sk-1' }, 'ws-a-team', BASE - i * 3600),
  );
  expect(await t.registry.insights.recordInsights(records, Date.now())).toHaveLength(3);
});
afterAll(async () => {
  await t.close();
});

describe('the kind argument of GraphQL insight lists', () => {
  it('sends each kind once: 5,000 repeats of two kinds are two', async () => {
    const kinds = Array.from({ length: 5000 }, (_, i) => (i % 2 === 0 ? 'COST_SPIKE' : 'LATENCY_REGRESSION'));
    asked.length = 0;
    const res = await gql(
      t,
      'query($k: [InsightKind!]) { skill(id: "sk-1") { insights(first: 10, kind: $k) { nodes { id } } } }',
      { k: kinds },
    );
    expect(res.errors).toBeUndefined();
    const nodes = (res.data?.skill as { insights: { nodes: { id: string }[] } }).insights.nodes;
    expect(nodes.map((n) => n.id)).toEqual(['in-cost_spike', 'in-latency_regression']);
    expect(asked.map((q) => q.kinds)).toEqual([['cost_spike', 'latency_regression']]);
  });
});
