/**
 * The webhook outbox's fairness (src/store/insight-port.ts `WebhookOutbox`), run against every
 * registry engine beside insight-contract.ts: a claim takes one delivery per subscription, its
 * oldest due, organizations taking turns; a paused subscription is skipped and keeps its
 * deliveries; a postponed delivery counts no attempt; an organization owes at most its bound,
 * also when replicas record at once.
 */
import { describe, expect, it } from 'vitest';
import type { Delivery, InsightKind, OutboxBound } from '../../src/store/insight-port.ts';
import { drain, freshInsightStores, insight, owed, subscription, type OpenedStore } from './insight-contract.ts';

const T = 1_780_000_000_000;
const LEASE = 60_000;

/** A claim's deliveries as `subscription > insight`, in the order answered (oldest due first). */
const named = (claimed: Delivery[]) => claimed.map((d) => `${d.subscription_id} > ${d.insight_id}`);

/** A bound of `max` that keeps what it hears. */
function bound(max: number): OutboxBound & { heard: [string, number][] } {
  const heard: [string, number][] = [];
  return { maxOwedPerOrg: max, heard, refused: (orgId, n) => heard.push([orgId, n]) };
}

export function outboxContract(engine: string, open: () => Promise<OpenedStore>): void {
  describe(`webhook outbox contract: ${engine}`, () => {
    const fresh = freshInsightStores(open);

    it('a claim takes one delivery per subscription, its oldest due, and organizations take turns', async () => {
      const { s } = await fresh();
      const kinds: [string, InsightKind][] = [
        ['sub-a1', 'latency_regression'],
        ['sub-a2', 'cost_spike'],
        ['sub-a3', 'usage_summary'],
      ];
      for (const [id, kind] of kinds) await s.createSubscription(subscription(id, { kinds: [kind] }));
      await s.createSubscription(subscription('sub-b', { org_id: 'org-b', workspace_id: 'ws-b', created_by: 'u-b' }));
      const a = (id: string, kind: InsightKind) => insight(id, { kind });
      const b = (id: string) => insight(id, { org_id: 'org-b', workspace_id: 'ws-b' });
      // Organization A's backlog is older than all of B's: oldest-first across the outbox would send A only.
      for (const [at, record] of [
        [T, a('lat-1', 'latency_regression')],
        [T + 1, a('lat-2', 'latency_regression')],
        [T + 2, a('lat-3', 'latency_regression')],
        [T + 10, a('cost-1', 'cost_spike')],
        [T + 11, a('cost-2', 'cost_spike')],
        [T + 20, a('use-1', 'usage_summary')],
        [T + 50, b('b-1')],
        [T + 51, b('b-2')],
      ] as const)
        await s.recordInsights([record], at);
      const now = T + 100;
      // Each organization's oldest subscription head first: A's first turn, then B's.
      const first = await s.claimDeliveries(now, LEASE, 2);
      expect(named(first)).toEqual(['sub-a1 > lat-1', 'sub-b > b-1']);
      // Then A's next turns; sub-a1 and sub-b have one in flight, so nothing more of them.
      const second = await s.claimDeliveries(now, LEASE, 10);
      expect(named(second)).toEqual(['sub-a2 > cost-1', 'sub-a3 > use-1']);
      expect(await s.claimDeliveries(now, LEASE, 10)).toEqual([]);
      for (const d of [...first, ...second]) await s.completeDelivery(d.id);
      // B's second turn comes before A's second subscription, although that one is older.
      expect(named(await s.claimDeliveries(now, LEASE, 2))).toEqual(['sub-a1 > lat-2', 'sub-b > b-2']);
      expect(named(await s.claimDeliveries(now, LEASE, 2))).toEqual(['sub-a2 > cost-2']);
      expect(await s.countDeliveries()).toBe(4);
    });

    it('a paused subscription is skipped until its pause ends, keeping its deliveries and their ids', async () => {
      const { s } = await fresh();
      await s.createSubscription(subscription('sub-1'));
      await s.createSubscription(subscription('sub-2'));
      await s.recordInsights([insight('in-1')], T);
      await s.recordInsights([insight('in-2')], T + 1000);
      await s.recordInsights([insight('in-3')], T + 2000);
      expect(await s.recordAttempt('sub-1', false)).toBe(1);
      expect(await s.recordAttempt('sub-1', false)).toBe(2);
      expect(await s.recordAttempt('sub-1', true)).toBe(0);
      expect(await s.recordAttempt('sub-1', false)).toBe(1);
      expect(await s.recordAttempt('sub-gone', false)).toBe(0);

      const claimed = await s.claimDeliveries(T + 2000, LEASE, 10);
      expect(named(claimed).sort()).toEqual(['sub-1 > in-1', 'sub-2 > in-1']);
      const leased = claimed.find((d) => d.subscription_id === 'sub-1');
      const done = claimed.find((d) => d.subscription_id === 'sub-2');
      await s.completeDelivery(done?.id ?? '');
      // Paused until T + 9000: in-2's bound ends within the pause (given up), in-1 is leased (kept), in-3 is kept.
      const pause = { nowMs: T + 2000, untilMs: T + 9000, giveUpEnqueuedBeforeMs: T + 1500 };
      expect(await s.pauseSubscription('sub-1', pause)).toBe(1);
      await s.retryDelivery(leased?.id ?? '', T + 1800);
      expect(named(await drain(s, T + 8999))).toEqual(['sub-2 > in-2', 'sub-2 > in-3']);
      expect(await s.countDeliveries()).toBe(2);
      const after = await s.claimDeliveries(T + 9000, LEASE, 10);
      expect(after.map((d) => [d.subscription_id, d.id, d.attempts])).toEqual([['sub-1', leased?.id, 1]]);
      await s.completeDelivery(after[0]?.id ?? '');
      expect(await owed(s, T + 9000)).toEqual(['sub-1 > in-3']);

      // A deleted subscription leaves no pause behind: created again, it is claimed at once.
      await s.pauseSubscription('sub-2', { nowMs: T, untilMs: T + 1e9, giveUpEnqueuedBeforeMs: T });
      expect(await s.deleteSubscription('org-a', 'sub-2')).toBe(true);
      await s.createSubscription(subscription('sub-2'));
      await s.recordInsights([insight('in-4')], T + 3000);
      expect(await owed(s, T + 9000)).toEqual(['sub-1 > in-4', 'sub-2 > in-4']);
    });

    it('a postponed delivery is due again later, its attempts not counted, its lease ended', async () => {
      const { s } = await fresh();
      await s.createSubscription(subscription('sub-1'));
      await s.recordInsights([insight('in-1')], T);
      const [leased] = await s.claimDeliveries(T, LEASE, 10);
      await s.postponeDelivery(leased?.id ?? '', T + 3000);
      expect(await s.claimDeliveries(T + 2999, LEASE, 10)).toEqual([]);
      const [again] = await s.claimDeliveries(T + 3000, LEASE, 10);
      expect([again?.id, again?.attempts, again?.next_attempt_ms]).toEqual([leased?.id, 0, T + 3000]);
      // A retry counts its attempt.
      await s.retryDelivery(again?.id ?? '', T + 4000);
      expect((await s.claimDeliveries(T + 4000, LEASE, 10)).map((d) => d.attempts)).toEqual([1]);
    });

    it('an organization owes at most its bound: past it nothing is enqueued, and the refusal is heard', async () => {
      const { s } = await fresh();
      await s.createSubscription(subscription('sub-1'));
      await s.createSubscription(subscription('sub-2'));
      await s.createSubscription(subscription('sub-b', { org_id: 'org-b', workspace_id: 'ws-b', created_by: 'u-b' }));
      const cap = bound(3);
      const inB = insight('in-b', { org_id: 'org-b', workspace_id: 'ws-b' });
      // Subscriptions in creation order: in-2's second delivery is the fourth of org-a.
      expect(await s.recordInsights([insight('in-1'), insight('in-2'), inB], T, cap)).toEqual(['in-1', 'in-2', 'in-b']);
      expect(cap.heard).toEqual([['org-a', 1]]);
      expect(await s.countDeliveries()).toBe(4);
      // The insight is stored and readable all the same.
      expect((await s.getInsights('org-a', ['in-2'])).map((i) => i.id)).toEqual(['in-2']);
      // Recorded again: nothing new, nothing refused.
      expect(await s.recordInsights([insight('in-2')], T, cap)).toEqual([]);
      expect(cap.heard).toEqual([['org-a', 1]]);
      // One of org-a delivered: room for one more.
      const one = (await s.claimDeliveries(T, LEASE, 10)).find((d) => d.subscription_id === 'sub-1');
      await s.completeDelivery(one?.id ?? '');
      expect(await s.recordInsights([insight('in-3')], T + 1, cap)).toEqual(['in-3']);
      expect(cap.heard).toEqual([
        ['org-a', 1],
        ['org-a', 1],
      ]);
      // Without a bound, nothing is refused.
      await s.recordInsights([insight('in-4')], T + 2);
      expect(await s.countDeliveries()).toBe(6);
      const left = await owed(s);
      expect(left.filter((d) => d.endsWith('in-4'))).toEqual(['sub-1 > in-4', 'sub-2 > in-4']);
      expect(left.filter((d) => d.endsWith('in-3'))).toEqual(['sub-1 > in-3']);
      expect(left).toContain('sub-b > in-b');
    });

    it('replicas recording for one organization at once never pass its bound', async () => {
      const { s, another } = await fresh();
      const other = await another();
      await s.createSubscription(subscription('sub-1'));
      const cap = bound(5);
      const batch = (prefix: string) => Array.from({ length: 10 }, (_, i) => insight(`${prefix}-${String(i)}`));
      const [a, b] = await Promise.all([
        s.recordInsights(batch('x'), T, cap),
        other.recordInsights(batch('y'), T, cap),
      ]);
      expect(a.length + b.length).toBe(20);
      expect(await s.countDeliveries()).toBe(5);
      expect(cap.heard.reduce((n, [, refused]) => n + refused, 0)).toBe(15);
    });
  });
}
