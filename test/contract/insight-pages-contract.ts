/**
 * More of the insight store contract (src/store/insight-port.ts), run against every engine beside
 * insight-contract.ts: pages of several lists in one call, each as `listInsights` answers it
 * alone; the cap on a workspace's subscriptions, kept by creations at once on two handles; and the
 * registry generation, moved by the writes an answer kept by generation sees, not by insights
 * (never kept) nor any bookkeeping write.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { Delivery, InsightPageRequest, InsightPagesQuery, InsightQuery } from '../../src/store/insight-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { insight, subscription, type OpenedStore } from './insight-contract.ts';

const T = 1_780_000_000_000;
const end = (h: number) => 1_779_000_000 + h * 3600;

/** 40 insights over three skills, an agent, two tools and three workspaces (and one of org-b). */
function records() {
  const subjects = [
    { type: 'skill', id: 'sk-1' },
    { type: 'skill', id: 'sk-2' },
    { type: 'agent', id: 'sk-1' },
    { type: 'tool', id: 'search', server: 'srv' },
    { type: 'tool', id: 'search', server: null },
  ] as const;
  const workspaces = ['ws-a-team', 'ws-a-other', 'ws-a'];
  const kinds = ['latency_regression', 'cost_spike', 'usage_summary'] as const;
  return [
    ...Array.from({ length: 40 }, (_, i) =>
      insight(`in-${String(i).padStart(2, '0')}`, {
        subject: subjects[i % subjects.length] ?? subjects[0],
        workspace_id: workspaces[i % workspaces.length] ?? 'ws-a',
        kind: kinds[i % kinds.length] ?? 'cost_spike',
        // Windows shared by several, so ties go by id.
        window_end_s: end(i % 7),
      }),
    ),
    insight('in-b', { org_id: 'org-b', workspace_id: 'ws-b', window_end_s: end(3) }),
  ];
}

export function insightPagesContract(engine: string, open: () => Promise<OpenedStore>): void {
  describe(`insight store contract, pages and caps: ${engine}`, () => {
    const opened: RegistryStore[] = [];
    const fresh = async () => {
      const o = await open();
      opened.push(o.store);
      await o.store.importBundle(parseBundle(smallBundle()));
      return {
        store: o.store,
        another: async () => {
          const other = await o.another();
          opened.push(other);
          return other;
        },
      };
    };
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
    });

    /** Each page of `query`, as listInsights answers it alone. */
    async function onePageEach(store: RegistryStore, query: InsightPagesQuery) {
      const { scopes, pages, ...shared } = query;
      return Promise.all(
        pages.map((p) => {
          const one: InsightQuery = {
            ...shared,
            workspaceIds: scopes[p.scope] ?? [],
            ...(p.subject !== undefined ? { subject: p.subject } : {}),
            ...(p.after !== undefined ? { after: p.after } : {}),
          };
          return store.insights.listInsights(one);
        }),
      );
    }

    it('answers each page of a batch as listInsights answers it alone, subjects and feeds mixed', async () => {
      const { store } = await fresh();
      const all = records();
      await store.insights.recordInsights(all, T);
      const scopes = [['ws-a-team', 'ws-a-other', 'ws-a', 'ws-b'], ['ws-a-other'], [], ['ws-a', 'ws-a-team']];
      const pages: InsightPageRequest[] = [
        { scope: 0, subject: { type: 'skill', id: 'sk-1' } },
        { scope: 0, subject: { type: 'skill', id: 'sk-1' }, after: { window_end_s: end(0), id: 'in-00' } },
        { scope: 1, subject: { type: 'skill', id: 'sk-2' } },
        { scope: 0, subject: { type: 'agent', id: 'sk-1' } },
        { scope: 0, subject: { type: 'tool', id: 'search', server: 'srv' } },
        { scope: 0, subject: { type: 'tool', id: 'search', server: null } },
        { scope: 0, subject: { type: 'skill', id: 'sk-none' } },
        { scope: 2, subject: { type: 'skill', id: 'sk-1' } },
        { scope: 9, subject: { type: 'skill', id: 'sk-1' } },
        { scope: 0 },
        { scope: 1, after: { window_end_s: end(1), id: 'in-01' } },
        { scope: 3 },
        { scope: 2 },
      ];
      const queries: InsightPagesQuery[] = [
        { orgId: 'org-a', scopes, pages, limit: 4 },
        { orgId: 'org-a', scopes, pages, limit: 100 },
        { orgId: 'org-a', scopes, pages, limit: 3, kinds: ['cost_spike', 'usage_summary'] },
        { orgId: 'org-a', scopes, pages, limit: 3, kinds: [] },
        { orgId: 'org-a', scopes, pages, limit: 5, sinceS: end(3) },
        { orgId: 'org-b', scopes, pages, limit: 5 },
      ];
      for (const query of queries) {
        const batch = await store.insights.listInsightPages(query);
        expect(batch).toEqual(await onePageEach(store, query));
      }
      const wide = await store.insights.listInsightPages(queries[1] as InsightPagesQuery);
      expect(wide.map((p) => p.length)).toEqual([8, 1, 3, 8, 8, 8, 0, 0, 0, 40, 3, 27, 0]);
      // After a position within a window end: the later ids of that end, then older ends.
      expect(wide[1]?.map((r) => r.id)).toEqual(['in-35']);
      expect(wide[10]?.map((r) => r.id)).toEqual(['in-22', 'in-07', 'in-28']);
      expect(wide[9]?.[0]).toEqual(all.find((r) => r.id === 'in-06'));
      expect(await store.insights.listInsightPages({ orgId: 'org-a', scopes, pages, limit: 0 })).toEqual(
        pages.map(() => []),
      );
      expect(await store.insights.listInsightPages({ orgId: 'org-a', scopes, pages: [], limit: 5 })).toEqual([]);
    });

    it('pages every subject of a batch to its end, each after its own last insight', async () => {
      const { store } = await fresh();
      await store.insights.recordInsights(records(), T);
      const scopes = [['ws-a-team', 'ws-a-other', 'ws-a']];
      const subjects = [
        { type: 'skill', id: 'sk-1' },
        { type: 'skill', id: 'sk-2' },
        { type: 'tool', id: 'search', server: null },
        { type: 'skill', id: 'sk-none' },
      ] as const;
      const seen: string[][] = subjects.map(() => []);
      let pages: { i: number; request: InsightPageRequest }[] = subjects.map((subject, i) => ({
        i,
        request: { scope: 0, subject },
      }));
      for (let round = 0; pages.length > 0 && round < 10; round++) {
        const batch = await store.insights.listInsightPages({
          orgId: 'org-a',
          scopes,
          pages: pages.map((p) => p.request),
          limit: 3,
        });
        const next: typeof pages = [];
        for (const [j, page] of batch.entries()) {
          const { i, request } = pages[j] as (typeof pages)[number];
          seen[i]?.push(...page.map((r) => r.id));
          const last = page.at(-1);
          if (page.length === 3 && last !== undefined)
            next.push({ i, request: { ...request, after: { window_end_s: last.window_end_s, id: last.id } } });
        }
        pages = next;
      }
      const whole = await Promise.all(
        subjects.map(async (subject) =>
          (
            await store.insights.listInsights({ orgId: 'org-a', workspaceIds: scopes[0] ?? [], subject, limit: 100 })
          ).map((r) => r.id),
        ),
      );
      expect(seen).toEqual(whole);
      expect(seen.map((ids) => ids.length)).toEqual([8, 8, 8, 0]);
    });

    it("answers a series' newest window end: its kind, subject, workspace and evaluation name only", async () => {
      const { store } = await fresh();
      const s = store.insights;
      const drop = (id: string, name: string, h: number, extra = {}) =>
        insight(id, { kind: 'evaluation_drop', window_end_s: end(h), payload: { evaluation_name: name }, ...extra });
      // The victim's drop at hour 1, then 150 drops of other names at later hours (newer than it).
      await s.recordInsights(
        [
          drop('in-victim', 'victim', 1),
          ...Array.from({ length: 150 }, (_, i) => drop(`in-junk-${String(i)}`, `junk-${String(i)}`, 2 + (i % 20))),
          drop('in-other-ws', 'victim', 30, { workspace_id: 'ws-a-other' }),
          drop('in-other-skill', 'victim', 30, { subject: { type: 'skill', id: 'sk-2' } }),
          insight('in-latency', { window_end_s: end(25) }),
          insight('in-tool', { window_end_s: end(26), subject: { type: 'tool', id: 'search', server: 'srv' } }),
        ],
        T,
      );
      const series = {
        orgId: 'org-a',
        workspaceId: 'ws-a-team',
        kind: 'evaluation_drop' as const,
        subject: { type: 'skill' as const, id: 'sk-1' },
        detail: 'victim',
      };
      expect(await s.lastWindowEnd(series, end(0))).toBe(end(1));
      expect(await s.lastWindowEnd(series, end(1))).toBeNull();
      expect(await s.lastWindowEnd({ ...series, detail: 'junk-7' }, end(0))).toBe(end(2 + 7));
      expect(await s.lastWindowEnd({ ...series, detail: 'unknown' }, end(0))).toBeNull();
      expect(await s.lastWindowEnd({ ...series, orgId: 'org-b' }, end(0))).toBeNull();
      // Kinds without a detail: a null detail, the newest of the kind.
      const latency = { ...series, kind: 'latency_regression' as const, detail: null };
      expect(await s.lastWindowEnd(latency, end(0))).toBe(end(25));
      expect(await s.lastWindowEnd({ ...latency, detail: 'victim' }, end(0))).toBeNull();
      const tool = { ...latency, subject: { type: 'tool' as const, id: 'search', server: 'srv' } };
      expect(await s.lastWindowEnd(tool, end(0))).toBe(end(26));
      expect(await s.lastWindowEnd({ ...tool, subject: { ...tool.subject, server: null } }, end(0))).toBeNull();
    });

    it('refuses a subscription past the cap of its workspace, and only there', async () => {
      const { store } = await fresh();
      const s = store.insights;
      for (const id of ['sub-1', 'sub-2', 'sub-3']) expect(await s.createSubscription(subscription(id), 3)).toBeNull();
      expect(await s.createSubscription(subscription('sub-4'), 3)).toEqual({ held: 3 });
      expect(await s.createSubscription(subscription('sub-5'), 2)).toEqual({ held: 3 });
      expect(await s.createSubscription(subscription('sub-o', { workspace_id: 'ws-a-other' }), 3)).toBeNull();
      expect(
        await s.createSubscription(subscription('sub-b', { org_id: 'org-b', workspace_id: 'ws-b' }), 1),
      ).toBeNull();
      expect((await s.listSubscriptions('org-a', ['ws-a-team'])).map((x) => x.id)).toEqual(['sub-1', 'sub-2', 'sub-3']);
      expect(await s.deleteSubscription('org-a', 'sub-2')).toBe(true);
      expect(await s.createSubscription(subscription('sub-4'), 3)).toBeNull();
    });

    it('30 creations at once through two handles store exactly the cap of 20', async () => {
      const { store, another } = await fresh();
      const other = await another();
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? store : other).insights.createSubscription(
            subscription(`sub-${String(i).padStart(2, '0')}`),
            20,
          ),
        ),
      );
      expect(results.filter((r) => r === null)).toHaveLength(20);
      expect(results.filter((r) => r !== null)).toEqual(Array.from({ length: 10 }, () => ({ held: 20 })));
      expect(await other.insights.listSubscriptions('org-a', ['ws-a-team'])).toHaveLength(20);
    });

    it('moves the registry generation with subscriptions and settings, never with insights or bookkeeping', async () => {
      const { store, another } = await fresh();
      const s = store.insights;
      const other = await another();
      const moved = async (write: () => Promise<unknown>) => {
        const before = await store.generation();
        await write();
        const after = await store.generation();
        expect(await other.generation()).toBe(after);
        return after !== before;
      };
      expect(await moved(() => s.createSubscription(subscription('sub-1')))).toBe(true);
      expect(await moved(() => s.createSubscription(subscription('sub-2'), 1))).toBe(false);
      expect(await moved(() => s.recordInsights([insight('in-1'), insight('in-2')], T))).toBe(false);
      expect(await moved(() => s.recordInsights([insight('in-1')], T))).toBe(false);
      expect(await moved(() => s.setDetectionSettings('org-a', 'ws-a-team', { min_invocations: 5 }))).toBe(true);
      const [first] = await s.claimDeliveries(T, 1000, 10);
      expect(await moved(() => s.retryDelivery(first?.id ?? '', T + 5000))).toBe(false);
      let second: Delivery | undefined;
      expect(await moved(async () => ([second] = await s.claimDeliveries(T + 2000, 1000, 10)))).toBe(false);
      expect(second?.id).not.toBe(first?.id);
      expect(await moved(() => s.completeDelivery(second?.id ?? ''))).toBe(false);
      expect(await moved(() => s.recordAttempt('sub-1', false))).toBe(false);
      const pause = { nowMs: T, untilMs: T + 9000, giveUpEnqueuedBeforeMs: T - 1 };
      expect(await moved(() => s.pauseSubscription('sub-1', pause))).toBe(false);
      expect(await moved(() => s.recordAttempt('sub-1', true))).toBe(false);
      expect(await moved(() => s.tryLease('detection', 'replica-a', T, 1000))).toBe(false);
      expect(await moved(() => s.tryLease('detection', 'replica-a', T + 500, 1000))).toBe(false);
      expect(await moved(() => s.setDetectionCursor('org-a', 1_779_000_000))).toBe(false);
      expect(await moved(() => other.insights.claimDeliveries(T + 1e6, 1000, 10))).toBe(false);
      expect(await moved(() => s.deleteSubscription('org-a', 'sub-1'))).toBe(true);
    });
  });
}
