/**
 * Insight retention's batch (InsightStore.pruneInsights), on every registry engine: insights whose
 * window ends before the cutoff are deleted, oldest windows first, at most a batch at a time, with
 * the deliveries still owed for them; those ending at the cutoff or after are kept, with theirs;
 * replicas pruning at once delete each insight once.
 */
import { describe, expect, it } from 'vitest';
import type { InsightRecord, InsightStore } from '../../src/store/insight-port.ts';
import { freshInsightStores, insight, owed, subscription, type OpenedStore } from './insight-contract.ts';

const T = 1_780_000_000_000;
const CUTOFF = 1_779_000_000;

/** An insight whose window ends at `endS` (a day long). */
const ending = (id: string, endS: number, extra: Partial<InsightRecord> = {}) =>
  insight(id, { window_start_s: endS - 86400, window_end_s: endS, ...extra });

async function kept(s: InsightStore, ids: readonly string[]): Promise<string[]> {
  return (await s.getInsights('org-a', ids)).map((i) => i.id).sort();
}

export function insightRetentionContract(engine: string, open: () => Promise<OpenedStore>): void {
  describe(`insight retention contract: ${engine}`, () => {
    const fresh = freshInsightStores(open);

    it('deletes the insights ending before the cutoff and keeps the one ending at it and after', async () => {
      const { s } = await fresh();
      const all = [
        ending('old-far', CUTOFF - 90 * 86400),
        ending('old-1s', CUTOFF - 1),
        ending('at-cutoff', CUTOFF),
        ending('after', CUTOFF + 1),
        ending('other-org', CUTOFF - 5, { org_id: 'org-b', workspace_id: 'ws-b' }),
      ];
      expect(await s.recordInsights(all, T)).toHaveLength(5);
      expect(await s.pruneInsights(CUTOFF, 100)).toBe(3);
      expect(
        await kept(
          s,
          all.map((i) => i.id),
        ),
      ).toEqual(['after', 'at-cutoff']);
      expect(await s.getInsights('org-b', ['other-org'])).toEqual([]);
      expect(await s.pruneInsights(CUTOFF, 100)).toBe(0);
    });

    it('deletes at most a batch at a time, the oldest windows first, until none is left', async () => {
      const { s } = await fresh();
      const ids = ['e', 'd', 'c', 'b', 'a'];
      // 'e' ends first, 'a' last: the order of windows, not of ids.
      await s.recordInsights(
        ids.map((id, i) => ending(id, CUTOFF - 100 + i)),
        T,
      );
      await s.recordInsights([ending('young', CUTOFF + 100)], T);
      expect(await s.pruneInsights(CUTOFF, 2)).toBe(2);
      expect(await kept(s, [...ids, 'young'])).toEqual(['a', 'b', 'c', 'young']);
      expect(await s.pruneInsights(CUTOFF, 2)).toBe(2);
      expect(await kept(s, [...ids, 'young'])).toEqual(['a', 'young']);
      expect(await s.pruneInsights(CUTOFF, 2)).toBe(1);
      expect(await s.pruneInsights(CUTOFF, 2)).toBe(0);
      expect(await s.pruneInsights(CUTOFF, 0)).toBe(0);
      expect(await kept(s, [...ids, 'young'])).toEqual(['young']);
    });

    it("drops the deliveries still owed for the insights it deletes, and keeps the others'", async () => {
      const { s } = await fresh();
      await s.createSubscription(subscription('sub-1'));
      await s.createSubscription(subscription('sub-2'));
      await s.recordInsights([ending('old', CUTOFF - 10)], T);
      await s.recordInsights([ending('young', CUTOFF)], T + 1);
      expect(await s.countDeliveries()).toBe(4);
      // One of the old insight's deliveries is leased (in flight) when retention runs.
      const [leased] = await s.claimDeliveries(T + 1, 60_000, 1);
      expect(leased?.insight_id).toBe('old');
      expect(await s.pruneInsights(CUTOFF, 100)).toBe(1);
      expect(await s.countDeliveries()).toBe(2);
      // The in-flight attempt settles on a delivery that is gone: nothing fails.
      await s.completeDelivery(leased?.id ?? '');
      await s.retryDelivery(leased?.id ?? '', T + 5);
      expect(await owed(s, T + 120_000)).toEqual(['sub-1 > young', 'sub-2 > young']);
    });

    it("keeps what a cooldown reads: the series' newest insight after the cutoff", async () => {
      const { s } = await fresh();
      await s.recordInsights([ending('older', CUTOFF - 3600), ending('newest', CUTOFF + 3600)], T);
      await s.pruneInsights(CUTOFF, 100);
      const series = { orgId: 'org-a', workspaceId: 'ws-a-team', kind: 'latency_regression', detail: null } as const;
      expect(await s.lastWindowEnd({ ...series, subject: { type: 'skill', id: 'sk-1' } }, CUTOFF - 7200)).toBe(
        CUTOFF + 3600,
      );
    });

    it('two replicas pruning at once delete every insight before the cutoff once', async () => {
      const { s, another } = await fresh();
      const other = await another();
      await s.createSubscription(subscription('sub-1'));
      const old = Array.from({ length: 40 }, (_, i) => ending(`old-${String(i).padStart(2, '0')}`, CUTOFF - 1 - i));
      await s.recordInsights([...old, ending('young', CUTOFF)], T);
      const loop = async (store: InsightStore) => {
        let total = 0;
        for (let n = await store.pruneInsights(CUTOFF, 7); n > 0; n = await store.pruneInsights(CUTOFF, 7)) total += n;
        return total;
      };
      const [a, b] = await Promise.all([loop(s), loop(other)]);
      expect(a + b).toBe(40);
      expect(await kept(s, [...old.map((i) => i.id), 'young'])).toEqual(['young']);
      expect(await owed(s)).toEqual(['sub-1 > young']);
    });
  });
}
