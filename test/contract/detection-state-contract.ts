/**
 * Detection's state in the registry store (detection-state-port.ts) on every engine: the
 * organization's agents by code point (latest versions, once each, bounded), and the page
 * positions kept per organization, which are bookkeeping and leave the registry generation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';

export function detectionStateContract(engine: string, open: () => Promise<RegistryStore>): void {
  describe(`registry contract, detection's state: ${engine}`, () => {
    let store: RegistryStore;
    beforeAll(async () => {
      store = await open();
      const bundle = smallBundle();
      const ag3 = bundle.artifacts.find((a) => a.id === 'ag-3');
      // By code point 'AG-upper' comes first; a locale's order puts it last.
      bundle.artifacts.push({ ...ag3, id: 'AG-upper', name: 'upper' } as (typeof bundle.artifacts)[number]);
      await store.importBundle(parseBundle(bundle));
    });
    afterAll(async () => {
      await store.close();
    });

    it("lists an organization's agents by code point, each once, at most the limit", async () => {
      expect(await store.detection.agentIds('org-a', 100)).toEqual(['AG-upper', 'ag-1', 'ag-2', 'ag-3']);
      expect(await store.detection.agentIds('org-a', 2)).toEqual(['AG-upper', 'ag-1']);
      expect(await store.detection.agentIds('org-b', 100)).toEqual(['ag-b1']);
      expect(await store.detection.agentIds('org-none', 100)).toEqual([]);
    });

    it('keeps page positions per organization, replaced whole, forgotten by an empty record', async () => {
      const s = store.detection;
      expect(await s.pagePositions('org-a')).toEqual({});
      await s.setPagePositions('org-a', { 'agent:named': 'aaaa-1950', 'evaluation:skill': 'sk-é' });
      await s.setPagePositions('org-b', { skill: 'sk-b1' });
      await s.setPagePositions('org-a', { 'agent:registry': 'ag-2' });
      expect(await s.pagePositions('org-a')).toEqual({ 'agent:registry': 'ag-2' });
      expect(await s.pagePositions('org-b')).toEqual({ skill: 'sk-b1' });
      await s.setPagePositions('org-b', {});
      expect(await s.pagePositions('org-b')).toEqual({});
    });

    it('leaves the registry generation as it is (bookkeeping)', async () => {
      const before = await store.generation();
      await store.detection.setPagePositions('org-a', { skill: 'sk-1' });
      await store.detection.setPagePositions('org-a', {});
      expect(await store.generation()).toBe(before);
    });
  });
}
