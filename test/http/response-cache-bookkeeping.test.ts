/**
 * The response caches (REST and GraphQL) against the insight store's writes, on both registry
 * engines: the webhook worker's claims, retries and completions and detection's leases and cursor
 * change no answer, so a cached answer stays a hit across them, and so do new insights (no cached
 * answer holds one: insight fields and routes are never kept); a subscription and detection
 * settings are writes a reader sees, so the next answer is read again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insightRecord } from '../fixtures/insights.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { subscription } from '../contract/insight-contract.ts';

const NOW = 1_790_000_000_000;
const GRAPHQL = '{ skill(id: "sk-1") { id name } tools(first: 3) { nodes { id name } } }';

const engines: [string, () => Record<string, string>][] = [['sqlite', () => ({})]];
const server = await fileDatabase('gw_cache_bookkeeping');
if (server !== null) engines.push(['postgres', () => server]);

for (const [engine, env] of engines) {
  describe(`response caches across insight writes (${engine})`, () => {
    let t: TestApp;
    let headers: { authorization: string };
    beforeAll(async () => {
      t = await startTestApp({ env: env() });
      headers = await t.auth('u-admin');
    });
    afterAll(async () => {
      await t.close();
    });

    /** The `x-cache` of a REST read and of a GraphQL query (undefined: read again). */
    async function caches() {
      const rest = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=2', headers });
      const graph = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ query: GRAPHQL }),
      });
      expect([rest.statusCode, graph.statusCode]).toEqual([200, 200]);
      expect(graph.json<{ errors?: unknown }>().errors).toBeUndefined();
      return [rest.headers['x-cache'], graph.headers['x-cache']];
    }

    it('a cached answer stays a hit across claims, retries, completions, pauses, leases and cursors', async () => {
      const s = t.registry.insights;
      expect(await s.createSubscription(subscription('sub-1', { url: 'https://hooks.example.com/a' }))).toBeNull();
      const insights = ['in-1', 'in-2'].map((id) =>
        insightRecord(id, 'cost_spike', { type: 'skill', id: 'sk-1' }, 'ws-a-team', 1_789_990_000),
      );
      expect(await caches()).toEqual([undefined, undefined]);
      expect(await caches()).toEqual(['hit', 'hit']);
      expect(await s.recordInsights(insights, NOW)).toEqual(['in-1', 'in-2']);
      expect(await caches()).toEqual(['hit', 'hit']);

      const [first] = await s.claimDeliveries(NOW, 30_000, 10);
      expect(await caches()).toEqual(['hit', 'hit']);
      expect(await s.tryLease('detection', 'replica-a', NOW, 60_000)).toBe(true);
      expect(await s.tryLease('detection', 'replica-a', NOW + 30_000, 60_000)).toBe(true);
      expect(await caches()).toEqual(['hit', 'hit']);
      await s.retryDelivery(first?.id ?? '', NOW + 60_000);
      expect(await s.recordAttempt('sub-1', false)).toBe(1);
      await s.pauseSubscription('sub-1', { nowMs: NOW, untilMs: NOW + 1, giveUpEnqueuedBeforeMs: NOW - 1 });
      const [second] = await s.claimDeliveries(NOW + 1, 30_000, 10);
      expect([first?.insight_id, second?.insight_id].sort()).toEqual(['in-1', 'in-2']);
      await s.completeDelivery(second?.id ?? '');
      expect(await s.recordAttempt('sub-1', true)).toBe(0);
      await s.setDetectionCursor('org-a', 1_789_990_000);
      expect(await s.claimDeliveries(NOW + 60_000, 30_000, 10)).toHaveLength(1);
      expect(await s.countDeliveries()).toBe(1);
      expect(await caches()).toEqual(['hit', 'hit']);
    });

    it('a new insight leaves it; a subscription and detection settings invalidate it', async () => {
      const s = t.registry.insights;
      expect(await caches()).toEqual(['hit', 'hit']);
      const fresh = insightRecord(
        'in-3',
        'latency_regression',
        { type: 'skill', id: 'sk-1' },
        'ws-a-team',
        1_790_000_000,
      );
      const listed = async () => {
        const rest = await t.app.inject({ method: 'GET', url: '/skill/v1/skills/sk-1/insights', headers });
        const graph = await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: JSON.stringify({ query: '{ skill(id: "sk-1") { insights(first: 10) { nodes { id } } } }' }),
        });
        const ids = (nodes: { id: string }[]) => nodes.map((n) => n.id).sort();
        return [
          ids(rest.json<{ items: { id: string }[] }>().items),
          ids(graph.json<{ data: { skill: { insights: { nodes: { id: string }[] } } } }>().data.skill.insights.nodes),
          rest.headers['x-cache'],
          graph.headers['x-cache'],
        ];
      };
      expect(await listed()).toEqual([['in-1', 'in-2'], ['in-1', 'in-2'], undefined, undefined]);
      expect(await s.recordInsights([fresh], NOW + 90_000)).toEqual(['in-3']);
      expect(await caches()).toEqual(['hit', 'hit']);
      // The lists of insights are never kept: the new one shows at once.
      const all = ['in-1', 'in-2', 'in-3'];
      expect(await listed()).toEqual([all, all, undefined, undefined]);
      expect(await s.recordInsights([fresh], NOW + 91_000)).toEqual([]);
      expect(await caches()).toEqual(['hit', 'hit']);
      expect(await s.createSubscription(subscription('sub-2', { url: 'https://hooks.example.com/b' }))).toBeNull();
      expect(await caches()).toEqual([undefined, undefined]);
      await s.setDetectionSettings('org-a', 'ws-a-team', { min_invocations: 5 });
      expect(await caches()).toEqual([undefined, undefined]);
      expect(await caches()).toEqual(['hit', 'hit']);
    });
  });
}
