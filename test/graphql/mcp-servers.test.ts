/**
 * MCP servers over GraphQL, on a real SQLite store with servers published through the store's port:
 * the typed members of the document and the document itself, versions, workspace and tools, the
 * readable list paged by cursor, `Tool.server`, `_entities`, and errors as REST states them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { errorCodes, gql } from './helpers.ts';

const SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** The github server's document (its versions differ in `version` only). */
const github = (version: string) => ({
  $schema: SCHEMA,
  name: 'io.github.acme/github',
  title: 'GitHub',
  description: 'Issues and pull requests.',
  version,
  websiteUrl: 'https://github.example/mcp',
  repository: { url: 'https://github.com/acme/github-mcp', source: 'github', subfolder: 'server' },
  packages: [
    {
      registryType: 'npm',
      identifier: '@acme/github-mcp',
      version,
      runtimeHint: 'npx',
      transport: { type: 'stdio' },
      environmentVariables: [{ name: 'GITHUB_TOKEN', isSecret: true, isRequired: true }],
    },
  ],
  remotes: [{ type: 'streamable-http', url: 'https://{host}/mcp', variables: { host: { default: 'api.example' } } }],
});

/** Publishes one version through the store's port. */
async function publish(
  store: RegistryStore,
  id: string,
  workspace: string,
  server: Record<string, unknown>,
  options: { status?: 'active' | 'deprecated' | 'deleted'; org?: string; at?: string } = {},
): Promise<void> {
  await store.publishMcpServer({
    id,
    org_id: options.org ?? 'org-a',
    workspace_id: workspace,
    server,
    status: options.status ?? 'active',
    published_at: options.at ?? '2026-02-01T00:00:00Z',
    created_by: 'u-admin',
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await publish(t.registry, 'srv-github', 'ws-a-team', github('1.0.0'), { at: '2026-02-01T00:00:00Z' });
  await publish(t.registry, 'srv-github', 'ws-a-team', github('1.2.0'), { at: '2026-02-03T00:00:00Z' });
  await publish(t.registry, 'srv-github', 'ws-a-team', github('2.0.0'), {
    at: '2026-02-05T00:00:00Z',
    status: 'deleted',
  });
  await publish(t.registry, 'srv-jira', 'ws-a-other', { name: 'io.github.acme/jira', version: '0.3.0' });
  await publish(t.registry, 'srv-mail', 'ws-b', { name: 'io.github.b/mail', version: '1.0.0' }, { org: 'org-b' });
  // A document whose members have other JSON types than the schema's: read as null, never an error.
  await publish(
    t.registry,
    'srv-odd',
    'ws-a-sub',
    {
      name: 'io.github.acme/odd',
      version: 'nightly',
      title: 7,
      repository: 'https://not-an-object.example',
      packages: [{ registryType: 'npm', identifier: 42, transport: 'stdio' }, 'not a package'],
      remotes: {},
    },
    { status: 'deprecated' },
  );
  await publish(
    t.registry,
    'srv-gone',
    'ws-a-team',
    { name: 'io.github.acme/gone', version: '1.0.0' },
    {
      status: 'deleted',
    },
  );
});
afterAll(async () => {
  await t.close();
});

const FULL = `query($id: ID!) { mcpServer(id: $id) {
  id name title description version status websiteUrl workspaceId publishedAt updatedAt createdBy
  repository { url source subfolder id }
  packages { registryType identifier version runtimeHint transportType transportUrl environmentVariables packageArguments }
  remotes { type url headers variables }
  server
  workspace { id }
  versions { version status publishedAt isLatest }
  tools { totalCount nodes { id name server { id } } }
} }`;

describe('mcpServer(id)', () => {
  it('answers the latest version: typed members, the document as published, versions, workspace and tools', async () => {
    const res = await gql(t, FULL, { id: 'srv-github' });
    expect(res.errors).toBeUndefined();
    const s = res.data.mcpServer;
    expect(s).toMatchObject({
      id: 'srv-github',
      name: 'io.github.acme/github',
      title: 'GitHub',
      description: 'Issues and pull requests.',
      version: '1.2.0',
      status: 'ACTIVE',
      websiteUrl: 'https://github.example/mcp',
      workspaceId: 'ws-a-team',
      publishedAt: '2026-02-03T00:00:00.000Z',
      createdBy: 'u-admin',
      repository: { url: 'https://github.com/acme/github-mcp', source: 'github', subfolder: 'server', id: null },
      packages: [
        {
          registryType: 'npm',
          identifier: '@acme/github-mcp',
          version: '1.2.0',
          runtimeHint: 'npx',
          transportType: 'stdio',
          transportUrl: null,
          environmentVariables: [{ name: 'GITHUB_TOKEN', isSecret: true, isRequired: true }],
          packageArguments: null,
        },
      ],
      remotes: [
        {
          type: 'streamable-http',
          url: 'https://{host}/mcp',
          headers: null,
          variables: { host: { default: 'api.example' } },
        },
      ],
      workspace: { id: 'ws-a-team' },
    });
    expect(s.server).toEqual(github('1.2.0'));
    expect(s.versions).toEqual([
      { version: '1.0.0', status: 'ACTIVE', publishedAt: '2026-02-01T00:00:00.000Z', isLatest: false },
      { version: '1.2.0', status: 'ACTIVE', publishedAt: '2026-02-03T00:00:00.000Z', isLatest: true },
      { version: '2.0.0', status: 'DELETED', publishedAt: '2026-02-05T00:00:00.000Z', isLatest: false },
    ]);
    // tl-1 (ws-a-team) and tl-2 (ws-a-sub) name srv-github; by name.
    expect(s.tools).toEqual({
      totalCount: 2,
      nodes: [
        { id: 'tl-1', name: 'create_issue', server: { id: 'srv-github' } },
        { id: 'tl-2', name: 'list_pulls', server: { id: 'srv-github' } },
      ],
    });
  });

  it('reads members of another JSON type than the schema’s as null, and keeps the document whole', async () => {
    const res = await gql(t, FULL, { id: 'srv-odd' });
    expect(res.errors).toBeUndefined();
    expect(res.data.mcpServer).toMatchObject({
      title: null,
      version: 'nightly',
      status: 'DEPRECATED',
      repository: null,
      packages: [{ registryType: 'npm', identifier: null, transportType: null }],
      remotes: [],
      tools: { totalCount: 0, nodes: [] },
    });
    expect(res.data.mcpServer.server.packages[1]).toBe('not a package');
  });

  it('refuses as REST does: 403 in a workspace of the organization the caller cannot read, else 404', async () => {
    const query = 'query($id: ID!) { mcpServer(id: $id) { id } }';
    const as = async (user: string, id: string, org = 'org-a') => {
      const res = await gql(t, query, { id }, user, org);
      return res.errors === undefined ? res.data.mcpServer.id : errorCodes(res).mcpServer;
    };
    expect(await as('u-viewer', 'srv-github')).toBe('srv-github');
    expect(await as('u-viewer', 'srv-jira')).toBe('access_denied');
    expect(await as('u-viewer', 'srv-mail')).toBe('not_found');
    expect(await as('u-viewer', 'nope')).toBe('not_found');
    expect(await as('u-b', 'srv-github', 'org-b')).toBe('not_found');
    expect(await as('u-b', 'srv-mail', 'org-b')).toBe('srv-mail');
    // Every version deleted: no latest version, so no server.
    expect(await as('u-admin', 'srv-gone')).toBe('not_found');
    const res = await gql(t, query, { id: 'srv-jira' }, 'u-viewer');
    expect(res.status).toBe(200);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'access_denied', http: { status: 403 } });
  });
});

describe('Tool.server', () => {
  it('is the server the tool names when the caller can read it, else null', async () => {
    const query = '{ tools(first: 50) { nodes { id serverId server { id version } } } }';
    const servers = async (user: string) =>
      Object.fromEntries(
        (await gql(t, query, {}, user)).data.tools.nodes.map(
          (n: { id: string; server: { id: string } | null }) => [n.id, n.server?.id ?? null] as const,
        ),
      );
    expect(await servers('u-admin')).toEqual({
      'tl-1': 'srv-github',
      'tl-2': 'srv-github',
      'tl-3': 'srv-jira',
      'tl-4': 'srv-jira',
    });
    // u-viewer reads tl-3 (ws-a-team) but not srv-jira (ws-a-other).
    expect(await servers('u-viewer')).toEqual({ 'tl-1': 'srv-github', 'tl-2': 'srv-github', 'tl-3': null });
    // tl-b1 names srv-mail of org-b; org-a's srv-mail would not do.
    const b = await gql(t, query, {}, 'u-b', 'org-b');
    expect(b.data.tools.nodes).toEqual([
      { id: 'tl-b1', serverId: 'srv-mail', server: { id: 'srv-mail', version: '1.0.0' } },
    ]);
  });
});

describe('mcpServers', () => {
  const LIST =
    'query($first: Int, $after: String, $search: String) { mcpServers(first: $first, after: $after, search: $search) { pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { id name status } } } }';

  it('lists the readable servers by name, deleted ones left out, page by page', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res = await gql(t, LIST, { first: 1, ...(after !== null ? { after } : {}) });
      expect(res.errors).toBeUndefined();
      const { pageInfo, edges } = res.data.mcpServers;
      seen.push(...edges.map((e: { node: { id: string } }) => e.node.id));
      expect(pageInfo.hasPreviousPage).toBe(after !== null);
      expect(pageInfo.endCursor).toBe(edges.at(-1)?.cursor ?? null);
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    // by name: io.github.acme/github, io.github.acme/jira, io.github.acme/odd
    expect(seen).toEqual(['srv-github', 'srv-jira', 'srv-odd']);
    const viewer = await gql(t, LIST, {}, 'u-viewer');
    expect(viewer.data.mcpServers.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([
      'srv-github',
      'srv-odd',
    ]);
    const b = await gql(t, LIST, {}, 'u-b', 'org-b');
    expect(b.data.mcpServers.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(['srv-mail']);
  });

  it('first: 0 answers no server and whether any is readable', async () => {
    const none = await gql(t, LIST, { first: 0 });
    expect(none.data.mcpServers).toEqual({
      pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: null, endCursor: null },
      edges: [],
    });
    const empty = await gql(t, LIST, { first: 0, search: 'no such server' });
    expect(empty.data.mcpServers.pageInfo.hasNextPage).toBe(false);
  });

  it('searches a case-insensitive part of the name; a cursor belongs to its search', async () => {
    const res = await gql(t, LIST, { search: 'ACME/J' });
    expect(res.data.mcpServers.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(['srv-jira']);
    const wild = await gql(t, LIST, { search: '%' });
    expect(wild.data.mcpServers.edges).toEqual([]);
    const first = await gql(t, LIST, { first: 1 });
    const foreign = await gql(t, LIST, { first: 1, search: 'acme', after: first.data.mcpServers.pageInfo.endCursor });
    expect(foreign.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_field', field: '/after' });
  });

  it('refuses a search over 200 characters, a negative first and a forged cursor with invalid_field', async () => {
    const long = await gql(t, LIST, { search: 'x'.repeat(201) });
    expect(long.errors?.[0]?.extensions).toMatchObject({
      code: 'invalid_field',
      field: '/search',
      http: { status: 422 },
    });
    expect((await gql(t, LIST, { search: 'x'.repeat(200) })).errors).toBeUndefined();
    const negative = await gql(t, LIST, { first: -1 });
    expect(negative.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_field', field: '/first' });
    for (const after of ['not a cursor', Buffer.from('{"n":1}').toString('base64url'), 'x'.repeat(2000)]) {
      const forged = await gql(t, LIST, { after });
      expect(forged.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_field', field: '/after' });
    }
  });
});

describe('federation _entities McpServer', () => {
  it('resolves readable servers and refuses the others as mcpServer(id) does', async () => {
    const query = `query($r: [_Any!]!) { _entities(representations: $r) { ... on McpServer { id name version } } }`;
    const r = ['srv-github', 'srv-jira', 'srv-mail'].map((id) => ({ __typename: 'McpServer', id }));
    const res = await gql(t, query, { r }, 'u-viewer');
    expect(res.data._entities).toEqual([
      { id: 'srv-github', name: 'io.github.acme/github', version: '1.2.0' },
      null,
      null,
    ]);
    expect(errorCodes(res)).toEqual({ '_entities.1': 'access_denied', '_entities.2': 'not_found' });
  });
});

describe('mcpServers and the MCP Registry API share the per-caller read quota', () => {
  it('over RATE_LIMIT_PER_MIN, with calls from either transport, 429 rate_limited', async () => {
    const own = await startTestApp({ env: { RATE_LIMIT_PER_MIN: '3' } });
    try {
      const list = '{ mcpServers { nodes { id } } }';
      const rest = async () =>
        (await own.app.inject({ method: 'GET', url: '/v0.1/servers', headers: await own.auth('u-admin') })).statusCode;
      expect((await gql(own, list)).errors).toBeUndefined();
      expect(await rest()).toBe(200);
      // Lookups by id spend nothing, as tool(id) does not.
      expect((await gql(own, '{ mcpServer(id: "nope") { id } }')).errors?.[0]?.extensions.code).toBe('not_found');
      expect((await gql(own, list)).errors).toBeUndefined();
      const over = await gql(own, list);
      expect(over.errors?.[0]?.extensions).toMatchObject({ code: 'rate_limited', http: { status: 429 } });
      expect(await rest()).toBe(429);
    } finally {
      await own.close();
    }
  });
});
