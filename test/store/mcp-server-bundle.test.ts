/**
 * The `mcp_servers` section of a bundle: server.json documents checked against the schema of
 * MCP Registry server.json 2025-12-11, the cross-entry rules, and an import through the real
 * SQLite engine (the store behaviour itself is the contract suite's).
 */
import { describe, expect, it } from 'vitest';
import { BundleError, parseBundle } from '../../src/bundle/parse.ts';
import { SERVER_JSON_SCHEMA_URI } from '../../src/bundle/server-json-schema.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';

const withPackage = {
  $schema: SERVER_JSON_SCHEMA_URI,
  name: 'io.github.acme/github-tools',
  title: 'GitHub tools',
  description: 'Issues, pull requests and code search on GitHub',
  version: '1.2.0',
  websiteUrl: 'https://acme.example/mcp/github',
  repository: { url: 'https://github.com/acme/github-tools', source: 'github', subfolder: 'server' },
  icons: [{ src: 'https://acme.example/icons/github.png', mimeType: 'image/png', sizes: ['48x48'] }],
  packages: [
    {
      registryType: 'npm',
      identifier: '@acme/github-tools',
      version: '1.2.0',
      runtimeHint: 'npx',
      transport: { type: 'stdio' },
      packageArguments: [
        { type: 'positional', valueHint: 'repository' },
        { type: 'named', name: '--read-only' },
      ],
      environmentVariables: [{ name: 'GITHUB_TOKEN', isRequired: true, isSecret: true }],
    },
  ],
  _meta: { 'io.modelcontextprotocol.registry/publisher-provided': { tool: 'acme-cli' } },
};

const withRemote = {
  name: 'com.acme/jira',
  description: 'Jira issues over streamable HTTP',
  version: '2025.06.01',
  remotes: [
    {
      type: 'streamable-http',
      url: 'https://{tenant}.jira.acme.example/mcp',
      headers: [{ name: 'Authorization', value: 'Bearer {token}', isSecret: true }],
      variables: { tenant: { description: 'Your Jira site', isRequired: true } },
    },
  ],
};

type Raw = ReturnType<typeof smallBundle> & { mcp_servers?: Record<string, unknown>[] };

function bundleWith(...servers: Record<string, unknown>[]): Raw {
  return { ...smallBundle(), mcp_servers: servers };
}

const entry = (id: string, server: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id,
  workspace_id: 'ws-a-team',
  server,
  created_by: 'u-admin',
  ...extra,
});

/** The BundleError parseBundle throws, as `path: message`. */
function refusal(raw: unknown): string {
  try {
    parseBundle(raw);
  } catch (err) {
    if (err instanceof BundleError) return err.message;
    throw err;
  }
  return 'accepted';
}

describe('bundle section mcp_servers', () => {
  it('takes server.json documents as given, in the organization of their workspace', () => {
    const b = parseBundle(
      bundleWith(
        entry('srv-github', withPackage, { status: 'deprecated', published_at: '2026-01-02T03:04:05+01:00' }),
        entry('srv-jira', withRemote, { workspace_id: 'ws-b', created_by: 'u-b' }),
      ),
    );
    expect(b.mcp_servers).toEqual([
      {
        id: 'srv-github',
        org_id: 'org-a',
        workspace_id: 'ws-a-team',
        server: withPackage,
        status: 'deprecated',
        published_at: '2026-01-02T03:04:05+01:00',
        created_by: 'u-admin',
      },
      {
        id: 'srv-jira',
        org_id: 'org-b',
        workspace_id: 'ws-b',
        server: withRemote,
        status: 'active',
        created_by: 'u-b',
      },
    ]);
    expect(JSON.stringify(b.mcp_servers[0]?.server)).toBe(JSON.stringify(withPackage));
    expect(parseBundle(smallBundle()).mcp_servers).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a name without a namespace', { ...withRemote, name: 'jira' }, 'mcp_servers[0].server.name: must match pattern'],
    ['a name missing', { description: 'd', version: '1.0.0' }, 'mcp_servers[0].server.name: is required'],
    ['a description over 100 characters', { ...withRemote, description: 'x'.repeat(101) }, 'server.description'],
    [
      'a package version "latest"',
      { ...withPackage, packages: [{ ...withPackage.packages[0], version: 'latest' }] },
      'mcp_servers[0].server.packages[0].version: must be a specific version, not "latest"',
    ],
    [
      'a positional argument with neither value nor valueHint',
      { ...withPackage, packages: [{ ...withPackage.packages[0], packageArguments: [{ type: 'positional' }] }] },
      'mcp_servers[0].server.packages[0].packageArguments[0].valueHint: is required',
    ],
    [
      'a remote URL that is not http(s)',
      { ...withRemote, remotes: [{ type: 'streamable-http', url: 'ftp://acme.example/mcp' }] },
      'mcp_servers[0].server.remotes[0].url: must match pattern',
    ],
    [
      'a repository without its source',
      { ...withRemote, repository: { url: 'https://x.example' } },
      'repository.source',
    ],
    ['a version "latest"', { ...withRemote, version: 'latest' }, 'mcp_servers[0].server.version: must be a specific'],
  ])('refuses %s, naming the entry and the field', (_, server, expected) => {
    expect(refusal(bundleWith(entry('srv-x', server)))).toContain(expected);
  });

  it('refuses an entry that is not a server.json object, or names no known workspace', () => {
    expect(refusal(bundleWith(entry('srv-x', [] as unknown as Record<string, unknown>)))).toBe(
      'mcp_servers[0].server: must be an object',
    );
    expect(refusal(bundleWith(entry('srv-x', withRemote, { workspace_id: 'ws-nowhere' })))).toBe(
      'mcp_servers[0].workspace_id: unknown workspace ws-nowhere',
    );
    expect(refusal(bundleWith(entry('srv-x', withRemote, { status: 'retired' })))).toBe(
      'mcp_servers[0].status: must be one of active, deprecated, deleted',
    );
  });

  it('holds one name per id and one id per name within an organization, each server in one workspace', () => {
    const v2 = { ...withRemote, version: '2025.07.01' };
    expect(
      refusal(bundleWith(entry('srv-jira', withRemote), entry('srv-jira', { ...v2, name: 'com.acme/other' }))),
    ).toBe('mcp_servers[1].server.name: MCP server srv-jira is named com.acme/jira in mcp_servers[0]');
    expect(refusal(bundleWith(entry('srv-jira', withRemote), entry('srv-jira2', v2)))).toBe(
      'mcp_servers[1].server.name: com.acme/jira is the name of MCP server srv-jira in mcp_servers[0]',
    );
    expect(
      refusal(bundleWith(entry('srv-jira', withRemote), entry('srv-jira', v2, { workspace_id: 'ws-a-sub' }))),
    ).toBe('mcp_servers[1].workspace_id: MCP server srv-jira is in ws-a-team in mcp_servers[0]');
    expect(refusal(bundleWith(entry('srv-jira', withRemote), entry('srv-jira', withRemote)))).toBe(
      'mcp_servers[1].server.version: duplicate version 2025.06.01 of MCP server srv-jira',
    );
    // Another organization is another namespace of ids and names.
    expect(
      parseBundle(bundleWith(entry('srv-jira', withRemote), entry('srv-jira', v2, { workspace_id: 'ws-b' })))
        .mcp_servers,
    ).toHaveLength(2);
  });

  it('imports into SQLite, re-imports in place, and tools find their server by server_id', async () => {
    const raw = bundleWith(
      entry('srv-github', { ...withPackage, version: '1.1.0' }, { published_at: '2026-01-01T00:00:00Z' }),
      entry('srv-github', withPackage, { published_at: '2026-01-02T00:00:00Z' }),
      entry('srv-jira', withRemote),
    );
    const store = new SqliteRegistryStore(':memory:');
    try {
      expect((await store.importBundle(parseBundle(raw))).mcp_servers).toBe(3);
      const history = await store.getMcpServerHistory('org-a', ['srv-github', 'srv-jira']);
      await store.importBundle(parseBundle(raw));
      expect(await store.getMcpServerHistory('org-a', ['srv-github', 'srv-jira'])).toEqual(history);
      const tool = (await store.getArtifacts(['tl-1']))[0];
      expect(tool?.server_id).toBe('srv-github');
      const [server] = await store.getMcpServers('org-a', [tool?.server_id ?? '']);
      expect(server).toMatchObject({ name: 'io.github.acme/github-tools', version: '1.2.0', is_latest: true });
      expect(server?.server).toEqual(withPackage);
    } finally {
      await store.close();
    }
  });
});
