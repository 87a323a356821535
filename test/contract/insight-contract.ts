/**
 * The insight store contract (src/store/insight-port.ts): every registry engine runs these
 * assertions unchanged. `open` gives a fresh store holding the small fixture bundle, and a way to
 * open a second handle on the same database (another replica).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import {
  INSIGHT_KINDS,
  type Delivery,
  type InsightRecord,
  type InsightStore,
  type WebhookSubscription,
} from '../../src/store/insight-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';

export interface OpenedStore {
  store: RegistryStore;
  /** Another handle on the same database, as a second replica holds. */
  another(): Promise<RegistryStore>;
}

const T = 1_780_000_000_000;

export function insight(id: string, extra: Partial<InsightRecord> = {}): InsightRecord {
  return {
    id,
    org_id: 'org-a',
    workspace_id: 'ws-a-team',
    kind: 'latency_regression',
    subject: { type: 'skill', id: 'sk-1' },
    window_start_s: 1_779_900_000,
    window_end_s: 1_779_986_400,
    payload: { p90_ms: 1200, baseline_p90_ms: 400, factor: 3, nested: { list: [1, 'two', null] } },
    created_at: '2026-05-28T10:00:00.000Z',
    ...extra,
  };
}

export function subscription(id: string, extra: Partial<WebhookSubscription> = {}): WebhookSubscription {
  return {
    id,
    org_id: 'org-a',
    workspace_id: 'ws-a-team',
    url: `https://hooks.example.com/${id}`,
    kinds: [],
    subjects: [],
    created_by: 'u-admin',
    created_at: '2026-05-01T00:00:00.000Z',
    secret_salt: `salt-${id}`,
    ...extra,
  };
}

/**
 * Every delivery due by `at`, in claim order: claimed and completed until none is left (a claim
 * takes one per subscription).
 */
export async function drain(store: InsightStore, at = T + 1e9): Promise<Delivery[]> {
  const all: Delivery[] = [];
  for (let claimed = await store.claimDeliveries(at, 1, 1000); claimed.length > 0;) {
    all.push(...claimed);
    for (const d of claimed) await store.completeDelivery(d.id);
    claimed = await store.claimDeliveries(at, 1, 1000);
  }
  return all;
}

/** Every delivery due by `at`, as `subscription > insight`, sorted (drained). */
export async function owed(store: InsightStore, at = T + 1e9): Promise<string[]> {
  return (await drain(store, at)).map((d) => `${d.subscription_id} > ${d.insight_id}`).sort();
}

/**
 * Inside a describe: opens a store with the small bundle imported for each call (`s`, its insight
 * store; `another`, a second store on the same data), all closed after each test.
 */
export function freshInsightStores(open: () => Promise<OpenedStore>) {
  const opened: RegistryStore[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  return async () => {
    const o = await open();
    opened.push(o.store);
    await o.store.importBundle(parseBundle(smallBundle()));
    return {
      s: o.store.insights,
      another: async () => {
        const other = await o.another();
        opened.push(other);
        return other.insights;
      },
    };
  };
}

export function insightContract(engine: string, open: () => Promise<OpenedStore>): void {
  describe(`insight store contract: ${engine}`, () => {
    const fresh = freshInsightStores(open);

    it('records an insight once: a second record stores nothing and enqueues nothing', async () => {
      const { s } = await fresh();
      await s.createSubscription(subscription('sub-all'));
      const tool = insight('in-tool', {
        kind: 'tool_failure_hotspot',
        subject: { type: 'tool', id: 'search', server: null },
      });
      expect(await s.recordInsights([insight('in-1'), tool], T)).toEqual(['in-1', 'in-tool']);
      expect(await s.countDeliveries()).toBe(2);
      // The same ids again (one with another payload): immutable, nothing new, no second delivery.
      const changed = insight('in-1', { payload: { p90_ms: 1 } });
      expect(await s.recordInsights([changed, tool, insight('in-2')], T + 5)).toEqual(['in-2']);
      expect(await s.countDeliveries()).toBe(3);
      expect(await s.getInsights('org-a', ['in-tool', 'in-1', 'unknown'])).toEqual([insight('in-1'), tool]);
      expect(await s.getInsights('org-b', ['in-1'])).toEqual([]);
      const claimed = (await drain(s, T + 5)).sort((a, b) => a.insight_id.localeCompare(b.insight_id));
      expect(claimed.map((d) => [d.insight_id, d.org_id, d.attempts, d.enqueued_ms, d.next_attempt_ms])).toEqual([
        ['in-1', 'org-a', 0, T, T],
        ['in-2', 'org-a', 0, T + 5, T + 5],
        ['in-tool', 'org-a', 0, T, T],
      ]);
      expect(new Set(claimed.map((d) => d.id)).size).toBe(3);
    });

    it('two replicas recording the same insights at once store one of each, with one delivery', async () => {
      const { s, another } = await fresh();
      const other = await another();
      await s.createSubscription(subscription('sub-all'));
      const batch = ['in-1', 'in-2', 'in-3'].map((id) => insight(id));
      const [a, b] = await Promise.all([s.recordInsights(batch, T), other.recordInsights(batch, T)]);
      expect([...a, ...b].sort()).toEqual(['in-1', 'in-2', 'in-3']);
      expect(await other.countDeliveries()).toBe(3);
    });

    it('enqueues one delivery per subscription of the same workspace whose kinds and subjects match', async () => {
      const { s } = await fresh();
      for (const sub of [
        subscription('sub-all'),
        subscription('sub-cost', { kinds: ['cost_spike'] }),
        subscription('sub-sk1', { subjects: [{ type: 'skill', id: 'sk-1' }] }),
        subscription('sub-tool', { subjects: [{ type: 'tool', id: 'search', server: 'srv' }] }),
        subscription('sub-both', { kinds: ['cost_spike', 'usage_summary'], subjects: [{ type: 'agent', id: 'ag-1' }] }),
        subscription('sub-parent', { workspace_id: 'ws-a' }),
        subscription('sub-child', { workspace_id: 'ws-a-sub' }),
        subscription('sub-b', { org_id: 'org-b', workspace_id: 'ws-b', created_by: 'u-b' }),
      ])
        await s.createSubscription(sub);
      await s.recordInsights(
        [
          insight('i-lat-sk1'),
          insight('i-cost-sk2', { kind: 'cost_spike', subject: { type: 'skill', id: 'sk-2' } }),
          insight('i-use-ag1', { kind: 'usage_summary', subject: { type: 'agent', id: 'ag-1' } }),
          insight('i-tool-srv', {
            kind: 'tool_failure_hotspot',
            subject: { type: 'tool', id: 'search', server: 'srv' },
          }),
          insight('i-tool-none', {
            kind: 'tool_failure_hotspot',
            subject: { type: 'tool', id: 'search', server: null },
          }),
          insight('i-agent-sk1', { subject: { type: 'agent', id: 'sk-1' } }),
          insight('i-parent', { workspace_id: 'ws-a' }),
          insight('i-org-b', { org_id: 'org-b', workspace_id: 'ws-b' }),
        ],
        T,
      );
      expect(await owed(s)).toEqual(
        [
          ...['i-lat-sk1', 'i-cost-sk2', 'i-use-ag1', 'i-tool-srv', 'i-tool-none', 'i-agent-sk1'].map(
            (i) => `sub-all > ${i}`,
          ),
          'sub-cost > i-cost-sk2',
          'sub-sk1 > i-lat-sk1',
          'sub-tool > i-tool-srv',
          'sub-both > i-use-ag1',
          'sub-parent > i-parent',
          'sub-b > i-org-b',
        ].sort(),
      );
    });

    it('lists insights newest window first, paged by keyset, filtered by scope, subject, kind and since', async () => {
      const { s } = await fresh();
      const end = (h: number) => 1_779_000_000 + h * 3600;
      const all = [
        insight('a', { window_end_s: end(5) }),
        insight('b', { window_end_s: end(5), kind: 'cost_spike' }),
        insight('c', { window_end_s: end(7), subject: { type: 'skill', id: 'sk-2' } }),
        insight('d', { window_end_s: end(3), workspace_id: 'ws-a-other' }),
        insight('e', { window_end_s: end(5), subject: { type: 'tool', id: 'search', server: 'srv' } }),
        insight('f', { window_end_s: end(1), subject: { type: 'tool', id: 'search', server: null } }),
        insight('g', { window_end_s: end(9), subject: { type: 'agent', id: 'sk-1' } }),
        insight('z', { window_end_s: end(8), org_id: 'org-b', workspace_id: 'ws-b' }),
      ];
      await s.recordInsights(all, T);
      const scope = { orgId: 'org-a', workspaceIds: ['ws-a-team', 'ws-a-other'], limit: 100 };
      const ids = async (extra: object = {}) => (await s.listInsights({ ...scope, ...extra })).map((i) => i.id);
      expect(await ids()).toEqual(['g', 'c', 'a', 'b', 'e', 'd', 'f']);
      // Pages of two, each after the last of the one before, give the same order.
      const paged: string[] = [];
      let after: { window_end_s: number; id: string } | undefined;
      for (;;) {
        const page = await s.listInsights({ ...scope, limit: 2, ...(after === undefined ? {} : { after }) });
        paged.push(...page.map((i) => i.id));
        const last = page.at(-1);
        if (page.length < 2 || last === undefined) break;
        after = { window_end_s: last.window_end_s, id: last.id };
      }
      expect(paged).toEqual(['g', 'c', 'a', 'b', 'e', 'd', 'f']);
      expect(await ids({ workspaceIds: ['ws-a-other'] })).toEqual(['d']);
      expect(await ids({ workspaceIds: [] })).toEqual([]);
      expect(await ids({ orgId: 'org-b', workspaceIds: ['ws-a-team', 'ws-b'] })).toEqual(['z']);
      expect(await ids({ subject: { type: 'skill', id: 'sk-1' } })).toEqual(['a', 'b', 'd']);
      expect(await ids({ subject: { type: 'agent', id: 'sk-1' } })).toEqual(['g']);
      expect(await ids({ subject: { type: 'tool', id: 'search', server: 'srv' } })).toEqual(['e']);
      expect(await ids({ subject: { type: 'tool', id: 'search', server: null } })).toEqual(['f']);
      expect(await ids({ kinds: ['cost_spike', 'usage_summary'] })).toEqual(['b']);
      expect(await ids({ kinds: [] })).toEqual([]);
      expect(await ids({ kinds: INSIGHT_KINDS })).toEqual(['g', 'c', 'a', 'b', 'e', 'd', 'f']);
      expect(await ids({ sinceS: end(5) })).toEqual(['g', 'c']);
      expect(await ids({ sinceS: end(5) - 1, subject: { type: 'skill', id: 'sk-1' }, limit: 1 })).toEqual(['a']);
      expect(await s.listInsights({ ...scope, limit: 0 })).toEqual([]);
      expect((await s.listInsights({ ...scope, limit: 1 }))[0]).toEqual(all[6]);
    });

    it('claims due deliveries under a lease: one per subscription, none while it has one leased, again when it ends', async () => {
      const { s } = await fresh();
      await s.createSubscription(subscription('sub-all'));
      await s.recordInsights([insight('in-1')], T);
      await s.recordInsights([insight('in-2')], T + 10);
      expect(await s.claimDeliveries(T - 1, 1000, 10)).toEqual([]);
      const [first, ...rest] = await s.claimDeliveries(T + 10, 1000, 10);
      expect(rest).toEqual([]);
      expect(first?.insight_id).toBe('in-1');
      // Leased until T + 1010: the subscription has one in flight, so nothing more of it is claimed.
      expect(await s.claimDeliveries(T + 20, 1000, 10)).toEqual([]);
      expect(await s.claimDeliveries(T + 1009, 1000, 10)).toEqual([]);
      // The lease ended without an outcome (the claimer died): claimed again, same id.
      const again = await s.claimDeliveries(T + 1010, 1000, 10);
      expect(again.map((d) => [d.id, d.attempts])).toEqual([[first?.id, 0]]);
      // Waiting for its retry, it holds nothing: the subscription's next due one goes.
      await s.retryDelivery(first?.id ?? '', T + 5000);
      const second = await s.claimDeliveries(T + 1010, 1000, 10);
      expect(second.map((d) => d.insight_id)).toEqual(['in-2']);
      await s.completeDelivery(second[0]?.id ?? '');
      expect(await s.claimDeliveries(T + 4999, 1000, 10)).toEqual([]);
      const retried = await s.claimDeliveries(T + 5000, 1000, 10);
      expect(retried.map((d) => [d.id, d.attempts, d.next_attempt_ms, d.enqueued_ms])).toEqual([
        [first?.id, 1, T + 5000, T],
      ]);
      expect(await s.countDeliveries()).toBe(1);
      await s.completeDelivery(first?.id ?? '');
      expect(await s.countDeliveries()).toBe(0);
      expect(await s.claimDeliveries(T + 1e9, 1000, 10)).toEqual([]);
    });

    it('two replicas claiming at once never take the same delivery, nor two of one subscription', async () => {
      const { s, another } = await fresh();
      const other = await another();
      const ids = Array.from({ length: 20 }, (_, i) => `sub-${String(i).padStart(2, '0')}`);
      for (const id of ids) await s.createSubscription(subscription(id));
      await s.recordInsights([insight('in-1'), insight('in-2')], T);
      expect(await s.countDeliveries()).toBe(40);
      const [a, b] = await Promise.all([s.claimDeliveries(T, 60_000, 25), other.claimDeliveries(T, 60_000, 25)]);
      expect([...a, ...b].map((d) => d.subscription_id).sort()).toEqual(ids);
      expect(await s.claimDeliveries(T, 60_000, 25)).toEqual([]);
    });

    it('deleting a subscription drops its pending deliveries, and only in its organization', async () => {
      const { s } = await fresh();
      await s.createSubscription(subscription('sub-1'));
      await s.createSubscription(subscription('sub-2', { kinds: ['latency_regression'] }));
      await s.recordInsights([insight('in-1'), insight('in-2')], T);
      expect(await s.countDeliveries()).toBe(4);
      expect(await s.deleteSubscription('org-b', 'sub-1')).toBe(false);
      expect(await s.deleteSubscription('org-a', 'sub-1')).toBe(true);
      expect(await s.deleteSubscription('org-a', 'sub-1')).toBe(false);
      expect(await s.countDeliveries()).toBe(2);
      expect(await owed(s)).toEqual(['sub-2 > in-1', 'sub-2 > in-2']);
      expect((await s.getSubscriptions('org-a', ['sub-1', 'sub-2'])).map((x) => x.id)).toEqual(['sub-2']);
    });

    it('keeps subscriptions as given, listed by creation then id within the scope asked', async () => {
      const { s } = await fresh();
      const tool = subscription('sub-c', {
        kinds: ['cost_spike', 'evaluation_drop'],
        subjects: [
          { type: 'tool', id: 'search', server: null },
          { type: 'skill', id: 'sk-1' },
        ],
        created_at: '2026-04-01T00:00:00.000Z',
      });
      const other = subscription('sub-a', { workspace_id: 'ws-a-other' });
      const later = subscription('sub-b', { created_at: '2026-06-01T00:00:00.000Z' });
      for (const sub of [later, other, tool, subscription('sub-z', { org_id: 'org-b', workspace_id: 'ws-b' })])
        await s.createSubscription(sub);
      expect(await s.listSubscriptions('org-a', ['ws-a-team', 'ws-a-other'])).toEqual([tool, other, later]);
      expect(await s.listSubscriptions('org-a', ['ws-a-other'])).toEqual([other]);
      expect(await s.listSubscriptions('org-a', [])).toEqual([]);
      expect(await s.listSubscriptions('org-a', ['ws-b'])).toEqual([]);
      expect(await s.getSubscriptions('org-a', ['sub-z', 'sub-c', 'nope'])).toEqual([tool]);
      await expect(s.createSubscription(subscription('sub-c'))).rejects.toThrow();
    });

    it('keeps detection cursors per organization', async () => {
      const { s } = await fresh();
      expect(await s.detectionCursor('org-a')).toBeNull();
      await s.setDetectionCursor('org-a', 1_779_000_000);
      await s.setDetectionCursor('org-b', 5);
      await s.setDetectionCursor('org-a', 1_779_003_600);
      expect(await s.detectionCursor('org-a')).toBe(1_779_003_600);
      expect(await s.detectionCursor('org-b')).toBe(5);
    });

    it('keeps detection settings per workspace, replaced whole, removed by an empty object', async () => {
      const { s } = await fresh();
      expect(await s.detectionSettings('org-a')).toEqual({});
      await s.setDetectionSettings('org-a', 'ws-a-team', { latency_factor: 1.5, min_invocations: 30 });
      await s.setDetectionSettings('org-a', 'ws-a', { cost_factor: 2 });
      await s.setDetectionSettings('org-b', 'ws-b', { cost_factor: 9 });
      await s.setDetectionSettings('org-a', 'ws-a-team', { min_invocations: 10 });
      expect(await s.detectionSettings('org-a')).toEqual({
        'ws-a': { cost_factor: 2 },
        'ws-a-team': { min_invocations: 10 },
      });
      await s.setDetectionSettings('org-a', 'ws-a', {});
      expect(await s.detectionSettings('org-a')).toEqual({ 'ws-a-team': { min_invocations: 10 } });
    });

    it('gives a named lease to one holder at a time: renewed by it, taken by another once expired', async () => {
      const { s, another } = await fresh();
      const other = await another();
      expect(await s.tryLease('detection', 'replica-a', T, 1000)).toBe(true);
      expect(await other.tryLease('detection', 'replica-b', T + 1, 1000)).toBe(false);
      expect(await other.tryLease('retention', 'replica-b', T + 1, 1000)).toBe(true);
      expect(await s.tryLease('detection', 'replica-a', T + 999, 1000)).toBe(true);
      expect(await other.tryLease('detection', 'replica-b', T + 1998, 1000)).toBe(false);
      expect(await other.tryLease('detection', 'replica-b', T + 1999, 1000)).toBe(true);
      expect(await s.tryLease('detection', 'replica-a', T + 2000, 1000)).toBe(false);
      // Both asking at once for a free lease: exactly one gets it.
      const both = await Promise.all([
        s.tryLease('x', 'replica-a', T, 1000),
        other.tryLease('x', 'replica-b', T, 1000),
      ]);
      expect(both.filter(Boolean).length).toBe(1);
    });
  });
}
