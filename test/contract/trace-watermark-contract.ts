/**
 * TraceStore.watermark on every engine: it moves after every write that may change an answer
 * (spans stored, a resend of the same spans, metric points, retention) and stays put for reads
 * and sealing, which change no answer. A second store over the same data (PostgreSQL: another
 * replica) sees the moves of the first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceStore } from '../../src/store/trace-port.ts';
import { spanRow } from '../fixtures/span-row.ts';

export interface WatermarkOptions {
  /** Seals what is stored (engines that seal). */
  seal?: (store: TraceStore) => Promise<void>;
  /** Another store over the same data, as another replica opens it; none for a single-process engine. */
  replica?: (store: TraceStore) => Promise<TraceStore>;
}

export function watermarkContract(engine: string, open: () => Promise<TraceStore>, options: WatermarkOptions = {}) {
  describe(`trace store watermark: ${engine}`, () => {
    let store: TraceStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => store.close());

    const row = (n: number) => spanRow(n, { start_s: 1_790_000_000 + n, category: 'tool_call', tool: 't' });

    it('moves after spans are stored, after a resend of them, after points and after retention', async () => {
      const marks = [await store.watermark()];
      const moved = async () => {
        const mark = await store.watermark();
        expect(marks, 'a new mark').not.toContain(mark);
        marks.push(mark);
      };
      expect((await store.insertSpans([row(1), row(2)])).stored).toBe(2);
      await moved();
      expect((await store.insertSpans([row(1), row(2)])).stored).toBe(0);
      await moved();
      const point = { org_id: 'org-a', key: 'k1', workspace_id: 'ws-a-team', session: 's', time_s: 1_790_000_000 };
      expect((await store.insertMetricPoints([{ ...point, metric: 'commits', value: 1 }])).stored).toBe(1);
      await moved();
      expect(await store.pruneBefore(1_790_000_002)).toBe(1);
      await moved();
    });

    it('stays put for reads and sealing', async () => {
      const mark = await store.watermark();
      await store.countSpans();
      await store.aggregate({
        orgId: 'org-a',
        subject: { skill: 'sk-1' },
        startS: 1_789_000_000,
        endS: 1_791_000_000,
        workspaceIds: ['ws-a-team'],
        filters: [],
        groupBy: [],
        measures: ['spans'],
      });
      await options.seal?.(store);
      expect(await store.watermark()).toBe(mark);
    });

    if (options.replica !== undefined) {
      it("another replica's writes move this replica's mark", async () => {
        const other = await (options.replica as NonNullable<WatermarkOptions['replica']>)(store);
        try {
          const mark = await store.watermark();
          await other.insertSpans([row(10)]);
          expect(await store.watermark()).not.toBe(mark);
        } finally {
          await other.close();
        }
      });
    }
  });
}
