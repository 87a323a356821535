/**
 * Admitting agent names as sent (TraceStore.admitAgentNames, store/agent-names.ts) on every
 * engine: at most `cap` distinct names per organization, workspace and UTC day, a name admitted
 * once admitted again (from the table, not only the engine's memory), the cap exact under
 * concurrent admissions, and retention dropping the days before its cutoff's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentNameUse } from '../../src/store/agent-names.ts';
import { QueryCancelledError, type TraceStore } from '../../src/store/trace-port.ts';
import { END } from './trace-contract.ts';

const DAY = Math.floor(END / 86400);
const use = (name: string, workspaceId = 'ws-1', day = DAY): AgentNameUse => ({ workspaceId, day, name });

export function agentNamesContract(
  engine: string,
  open: () => Promise<TraceStore>,
  /** The same stored names through a store that has not admitted any (reopened, or another replica). */
  reopen: (store: TraceStore) => Promise<TraceStore>,
): void {
  describe(`trace store contract, agent names as sent: ${engine}`, () => {
    let store: TraceStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });
    const admit = (uses: AgentNameUse[], cap = 3, orgId = 'org-1') => store.admitAgentNames({ orgId, cap, uses });

    it('admits at most `cap` distinct names a workspace and day, in the order first asked', async () => {
      expect(await admit([use('a'), use('b'), use('a'), use('c'), use('d'), use('e')])).toEqual([
        true,
        true,
        true,
        true,
        false,
        false,
      ]);
      // Known names stay admitted; the workspace and day hold 3: no new one.
      expect(await admit([use('e'), use('b'), use('f'), use('c')])).toEqual([false, true, false, true]);
      // Another workspace, day or organization holds names of its own.
      expect(await admit([use('e', 'ws-2'), use('e', 'ws-1', DAY - 1), use('a', 'ws-1', DAY + 1)])).toEqual([
        true,
        true,
        true,
      ]);
      expect(await admit([use('e')], 3, 'org-2')).toEqual([true]);
      expect(await admit([use('x', 'ws-3')], 0)).toEqual([false]);
    });

    it('answers from the stored names, whatever the engine remembers', async () => {
      store = await reopen(store);
      expect(await admit([use('c'), use('d'), use('a'), use('b')])).toEqual([true, false, true, true]);
      expect(await admit([use('g', 'ws-2'), use('h', 'ws-2'), use('i', 'ws-2')])).toEqual([true, true, false]);
    });

    it('holds the cap exactly when many requests admit at once', async () => {
      const requests = Array.from({ length: 20 }, (_, r) =>
        admit(
          Array.from({ length: 10 }, (_, n) => use(`r${r}-n${n}`, 'ws-busy')),
          50,
        ),
      );
      const verdicts = (await Promise.all(requests)).flat();
      expect(verdicts.filter((v) => v).length).toBe(50);
      const again = await reopen(store);
      store = again;
      const all = Array.from({ length: 20 }, (_, r) =>
        Array.from({ length: 10 }, (_, n) => use(`r${r}-n${n}`, 'ws-busy')),
      );
      expect((await admit(all.flat(), 50)).filter((v) => v).length).toBe(50);
    });

    it('admits a request of 150,000 distinct names (OTLP_MAX_SPANS and OTLP_MAX_AGENT_NAMES raised)', async () => {
      // A search of the names per use grew with their square (15 s here), then the admitted names,
      // spread as arguments, overflowed the stack: the request failed on every retry.
      const uses = Array.from({ length: 150_000 }, (_, n) => use(`agent-${n}`, 'ws-many'));
      const expected = uses.map((_, n) => n < 140_000);
      expect(await admit(uses, 140_000)).toEqual(expected);
      expect(await admit(uses.toReversed(), 140_000)).toEqual(expected.toReversed());
    });

    it('forgets the days before the retention cutoff', async () => {
      expect(await admit([use('p', 'ws-old', DAY - 40), use('q', 'ws-old', DAY - 40)], 1)).toEqual([true, false]);
      await store.pruneBefore((DAY - 39) * 86400);
      store = await reopen(store);
      // The day's name is gone: a new one is admitted in its place.
      expect(await admit([use('q', 'ws-old', DAY - 40)], 1)).toEqual([true]);
    });

    it('refuses a request outside its bounds, and one whose signal is aborted', async () => {
      await expect(admit([use('a')], -1)).rejects.toThrow(/cap/);
      await expect(admit([use('a', 'ws-1', 1.5)])).rejects.toThrow(/day/);
      const controller = new AbortController();
      controller.abort();
      await expect(
        store.admitAgentNames({ orgId: 'org-1', cap: 3, uses: [use('new')] }, controller.signal),
      ).rejects.toThrow(QueryCancelledError);
    });
  });
}
