/**
 * The registry store contract of `listToolsOfServers` (the tools of MCP servers), run by every
 * engine's contract file: latest versions only, within the given workspaces, ordered by server id,
 * name (byte order) and id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';

/** The small bundle plus tl-5 (moved from srv-github to srv-jira in its latest version) and tl-6 "Zed". */
function bundle() {
  const b = smallBundle();
  const tl3 = b.artifacts.find((a) => a.id === 'tl-3') as Record<string, unknown>;
  b.artifacts.push(
    {
      ...tl3,
      id: 'tl-5',
      name: 'archive',
      tool_name: 'archive',
      server_id: 'srv-github',
      is_latest: false,
      version_ordinal: 1,
    } as never,
    { ...tl3, id: 'tl-5', name: 'archive', tool_name: 'archive', server_id: 'srv-jira', version_ordinal: 2 } as never,
    { ...tl3, id: 'tl-6', name: 'Zed', tool_name: 'Zed', server_id: 'srv-github', workspace_id: 'ws-a-sub' } as never,
  );
  return b;
}

export function toolsOfServersContract(engine: string, open: () => Promise<RegistryStore>): void {
  describe(`registry store contract, tools of MCP servers: ${engine}`, () => {
    let store: RegistryStore;
    const list = async (workspaces: string[], servers: string[]) =>
      (await store.listToolsOfServers(workspaces, servers)).map((t) => [t.server_id, t.name, t.id, t.version_ordinal]);
    beforeAll(async () => {
      store = await open();
      await store.importBundle(parseBundle(bundle()));
    });
    afterAll(async () => {
      await store.close();
    });

    it('lists the latest tools of the servers within the workspaces, by server, name and id', async () => {
      expect(await list(['ws-a-team', 'ws-a-sub'], ['srv-jira', 'srv-github'])).toEqual([
        ['srv-github', 'Zed', 'tl-6', 1],
        ['srv-github', 'create_issue', 'tl-1', 1],
        ['srv-github', 'list_pulls', 'tl-2', 1],
        ['srv-jira', 'archive', 'tl-5', 2],
        ['srv-jira', 'search_tickets', 'tl-3', 1],
      ]);
      expect(await list(['ws-a-other', 'ws-a-team'], ['srv-jira'])).toEqual([
        ['srv-jira', 'archive', 'tl-5', 2],
        ['srv-jira', 'close_ticket', 'tl-4', 1],
        ['srv-jira', 'search_tickets', 'tl-3', 1],
      ]);
      expect((await store.listToolsOfServers(['ws-a-sub'], ['srv-github']))[0]?.doc).toMatchObject({
        tool_name: 'Zed',
        provider_kind: 'mcp',
      });
    });

    it('reads nothing outside the workspaces, for unknown servers or empty lists', async () => {
      expect(await list(['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other'], ['srv-mail', 'nope'])).toEqual([]);
      expect(await list(['ws-b'], ['srv-mail', 'srv-github'])).toEqual([['srv-mail', 'send_mail', 'tl-b1', 1]]);
      expect(await list([], ['srv-github'])).toEqual([]);
      expect(await list(['ws-a-team'], [])).toEqual([]);
    });
  });
}
