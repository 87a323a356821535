/**
 * The demo MCP servers: one per tool server of every organization with tools, under the id the
 * tools give as `server_id` and the demo telemetry records as `mcp.server.name`, valid
 * server.json documents, stored and read back through the real SQLite engine.
 */
import { describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { McpServerVersion } from '../../src/domain/types.ts';
import { demoBundle } from '../../src/seed/demo-bundle.ts';
import { demoTraceOptions, seedDemoIfEmpty } from '../../src/seed/seed.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';

const ORGS_WITH_TOOLS = ['org-acme', 'org-globex', 'org-initech'];

describe('demo MCP servers', () => {
  it('give every demo tool its server, in its organization, with packages, remotes and versions', () => {
    const b = parseBundle(demoBundle());
    const tools = b.artifacts.filter((a) => a.kind === 'tool' && a.is_latest);
    const orgOf = new Map(b.workspaces.map((w) => [w.id, w.org_id]));
    const servers = new Set(b.mcp_servers.map((s) => `${s.org_id} ${s.id}`));
    for (const t of tools) expect(servers).toContain(`${orgOf.get(t.workspace_id) ?? ''} ${t.server_id ?? ''}`);
    expect(new Set(b.mcp_servers.map((s) => s.org_id))).toEqual(new Set(ORGS_WITH_TOOLS));
    expect(b.mcp_servers.filter((s) => s.org_id === 'org-acme').map((s) => s.id)).toContain('mcp-github');

    const docs = b.mcp_servers.map((s) => s.server as { packages?: Obj[]; remotes?: Obj[] });
    const packageTypes = new Set(docs.flatMap((d) => (d.packages ?? []).map((p) => p.registryType)));
    expect(packageTypes).toEqual(new Set(['npm', 'pypi', 'oci']));
    const transports = new Set(docs.flatMap((d) => (d.packages ?? []).map((p) => (p.transport as Obj).type)));
    expect(transports).toEqual(new Set(['stdio']));
    expect(new Set(docs.flatMap((d) => (d.remotes ?? []).map((r) => r.type)))).toEqual(new Set(['streamable-http']));
    expect(docs.every((d) => 'repository' in d && 'websiteUrl' in d)).toBe(true);
    const acme = b.mcp_servers.filter((s) => s.org_id === 'org-acme');
    expect(acme.filter((s) => s.id === 'mcp-github').map((s) => (s.server as { version: string }).version)).toEqual([
      '1.4.0',
      '1.5.0',
      '1.6.2',
    ]);
    expect(acme.filter((s) => s.status === 'deprecated').map((s) => s.id)).toEqual(['mcp-postgres']);
  });

  it('are stored by the first-start seed, and the demo telemetry names them', async () => {
    const store = new SqliteRegistryStore(':memory:');
    try {
      expect(await seedDemoIfEmpty(store)).toBe(true);
      const options = await demoTraceOptions(store, 1_800_000_000, 30);
      const named = [...new Set(options?.tools?.map((t) => t.server) ?? [])].sort();
      expect(named.length).toBeGreaterThan(5);
      const latest = await store.getMcpServers('org-acme', named as string[]);
      expect(latest.map((s) => s.id)).toEqual(named);
      expect(latest.every((s) => s.is_latest && s.status === 'active')).toBe(true);

      const github = await store.getMcpServerHistory('org-acme', ['mcp-github']);
      expect(github.map((s: McpServerVersion) => `${s.version}${s.is_latest ? '*' : ''}`)).toEqual([
        '1.4.0',
        '1.5.0',
        '1.6.2*',
      ]);
      expect(github[2]).toMatchObject({
        name: 'com.example.acme/github',
        workspace_id: 'ws-acme-platform',
        created_by: 'user-alice',
      });
      const postgres = await store.getMcpServerHistory('org-acme', ['mcp-postgres']);
      expect(postgres.map((s) => `${s.version} ${s.status}${s.is_latest ? '*' : ''}`)).toEqual([
        '1.1.0 deprecated',
        '1.2.0 active*',
      ]);
      // The same ids in another organization are its own servers.
      expect((await store.getMcpServers('org-globex', ['mcp-github']))[0]?.name).toBe('com.example.globex/github');
      const page = await store.listMcpServerVersions({
        workspaceIds: (await store.listOrgWorkspaces('org-acme')).map((w) => w.id),
        latestOnly: true,
        includeDeleted: false,
        limit: 100,
      });
      expect(page).toHaveLength(12);
    } finally {
      await store.close();
    }
  });
});

type Obj = Record<string, unknown>;
