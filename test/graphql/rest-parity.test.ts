/**
 * GraphQL answers what REST answers: the same handlers, the same items, every REST field in
 * camelCase (enums upper-cased), plus the edges of the graph.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { errorCodes, gql } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function rest(method: 'GET' | 'POST', url: string, payload?: object, user = 'u-admin') {
  const res = await t.app.inject({ method, url, headers: await t.auth(user), ...(payload ? { payload } : {}) });
  expect(res.statusCode).toBe(200);
  return res.json();
}

const camel = (s: string) => s.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
const ENUM_FIELDS = new Set([
  'kind',
  'artifact_status',
  'credential_kind',
  'workspace_status',
  'effective_role',
  'rel_type',
  'provenance',
  'relationship_status',
  'direction',
]);

/** A REST object as GraphQL spells it: camelCase keys, upper-case enum values. */
function asGraphql(value: unknown, key = ''): unknown {
  if (
    [
      'source_metadata',
      'metadata',
      'input_schema',
      'output_schema',
      'attributes',
      'grounding',
      'schema',
      'tools',
    ].includes(key)
  )
    return value;
  if (Array.isArray(value)) return value.map((v) => asGraphql(v));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), asGraphql(v, k)]));
  }
  return ENUM_FIELDS.has(key) && typeof value === 'string' ? value.toUpperCase() : value;
}

const ARTIFACT_FIELDS = `
  id name kind artifactStatus sourceType extension contentHashHex commitTs createdAt createdBy updatedAt updatedBy
  versionOrdinal isLatest workspaceId displayName oidcClientId ownerId projectId repoId sourceCreatedAt sourceCreatedBy
  sourceDigest sourceId sourceLastModifiedAt sourceLastModifiedBy sourceMetadata sourceSyncedAt sourceUri sourceVersion
  versionLabel identity { clientId credentialKind apiKey expiresAt }
  permissions { canAddRelationship canCreateVersion canDelete canEdit canLink canRead canRemoveRelationship canUnlink }
  relationships { count
    incoming { direction provenance relType relationshipStatus attributes confidence label role weight from { id kind } to { id kind } }
    outgoing { direction provenance relType relationshipStatus attributes confidence label role weight from { id kind } to { id kind } } }
`;

/** Drops the nulls GraphQL returns for fields REST leaves out. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}

describe('GraphQL and REST agree', () => {
  it('agentSearch returns the REST search items with every agent field', async () => {
    const restBody = await rest('POST', '/agent/v1/agents/search', { query: 'invoice' });
    const res = await gql(
      t,
      `{
      agentSearch(query: "invoice") {
        totalCount
        nodes { ${ARTIFACT_FIELDS} agentFrameworkId agentProviderId instructions isSystem maxStepCount modelId
          tools { kind name } profileImageUrl }
      }
    }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.agentSearch.totalCount).toBe(restBody.page.total);
    expect(withoutNulls(res.data.agentSearch.nodes)).toEqual(asGraphql(restBody.items));
  });

  it('tools returns the REST tool list with every tool field', async () => {
    const restBody = await rest('GET', '/mcp/v1/tools?limit=3');
    const res = await gql(
      t,
      `{
      tools(first: 3) { totalCount pageInfo { hasNextPage endCursor }
        nodes { ${ARTIFACT_FIELDS} inputSchema outputSchema isSystem owner providerKind serverId toolName } }
    }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.tools.totalCount).toBe(restBody.page.total);
    expect(withoutNulls(res.data.tools.nodes)).toEqual(asGraphql(restBody.items));
  });

  it('tools pages with first/after like REST with limit/offset', async () => {
    const first = await gql(t, '{ tools(first: 2) { pageInfo { hasNextPage endCursor } nodes { id } } }');
    const next = await gql(
      t,
      'query($after: String) { tools(first: 2, after: $after) { pageInfo { hasPreviousPage } nodes { id } } }',
      { after: first.data.tools.pageInfo.endCursor },
    );
    const restBody = await rest('GET', '/mcp/v1/tools?limit=2&offset=2');
    expect(next.data.tools.nodes.map((n: { id: string }) => n.id)).toEqual(
      restBody.items.map((i: { id: string }) => i.id),
    );
    expect(next.data.tools.pageInfo.hasPreviousPage).toBe(true);
    const foreign = await gql(t, '{ tools(after: "bm90LWEtY3Vyc29y") { totalCount } }');
    expect(errorCodes(foreign)).toEqual({ tools: 'invalid_field' });
  });

  it('toolAggregate groups as the REST aggregate does', async () => {
    const restBody = await rest('POST', '/mcp/v1/tools/aggregate', { group_by: ['server_id'] });
    const res = await gql(
      t,
      '{ toolAggregate(groupBy: [SERVER_ID]) { totalCount nodes { key { serverId } count servers latestUpdatedAt } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.toolAggregate.totalCount).toBe(restBody.page.total);
    expect(res.data.toolAggregate.nodes).toEqual(
      restBody.groups.map((g: { key: { server_id: string | null }; metrics: Record<string, unknown> }) => ({
        key: { serverId: g.key.server_id },
        count: g.metrics.count,
        servers: g.metrics.servers,
        latestUpdatedAt: g.metrics.latest_updated_at,
      })),
    );
  });

  it('users returns the REST directory users, and endCursor is REST next_cursor', async () => {
    const restBody = await rest('GET', '/registry/v1/users?limit=2');
    const res = await gql(
      t,
      `{ users(first: 2) { totalCount pageInfo { endCursor hasNextPage }
      nodes { id createdAt updatedAt name email artifactCount artifactCountByKind { agent tool skill prompt document }
        enrichment { enrichmentStatus enrichedAt errorClass provider reason stampedAt grounding
          profile { company department fullName githubUrl linkedinUrl subDepartment title twitterUrl websiteUrl } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.users.totalCount).toBe(restBody.page.total);
    expect(res.data.users.pageInfo.endCursor).toBe(restBody.page.next_cursor ?? res.data.users.pageInfo.endCursor);
    const expected = asGraphql(restBody.items) as Record<string, unknown>[];
    const got = withoutNulls(res.data.users.nodes) as Record<string, unknown>[];
    expect(got.map((u) => ({ ...u, artifactCountByKind: undefined }))).toEqual(
      expected.map((u) => ({ ...u, artifactCountByKind: undefined })),
    );
    for (const [i, u] of got.entries()) {
      const byKind = (expected[i] as { artifactCountByKind: Record<string, number> }).artifactCountByKind;
      expect(Object.entries(u.artifactCountByKind as object).filter(([, n]) => n > 0)).toEqual(
        Object.entries(byKind)
          .filter(([, n]) => n > 0)
          .sort(
            ([a], [b]) =>
              ['agent', 'tool', 'skill', 'prompt', 'document'].indexOf(a) -
              ['agent', 'tool', 'skill', 'prompt', 'document'].indexOf(b),
          ),
      );
    }
  });

  it('insightSchemas returns the REST insight schemas', async () => {
    const restBody = await rest('GET', '/skill/v1/insights/schemas');
    const res = await gql(t, '{ insightSchemas { name version title description schema } }');
    expect(res.data.insightSchemas).toEqual(restBody.items);
  });

  it('workspace(id).subtree with projects and artifacts is the REST export', async () => {
    const restBody = await rest('GET', '/registry/v1/workspaces/ws-a-team/export');
    const res = await gql(
      t,
      `{ workspace(id: "ws-a-team") { subtree {
      id name displayName kind workspaceStatus rootWorkspaceId createdAt createdBy updatedAt updatedBy artifactCount
      effectiveRole memberCount parentId
      permissions { canCreateContent canDelete canDiscover canJoin canLeave canManageMembers canRead canUpdate }
      projects { id name displayName projectStatus workspaceId rootWorkspaceId artifactCount knowledgeUrls }
      artifacts(first: 200) { nodes { id kind workspaceId workspace { id } project { id } } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    const subtree = res.data.workspace.subtree as {
      id: string;
      projects: { id: string }[];
      artifacts: { nodes: { id: string }[] };
    }[];
    const strip = (w: Record<string, unknown>) => {
      const { parent: _p, rootWorkspace: _r, artifactCountByKind: _c, ...rest } = w;
      return rest;
    };
    expect(withoutNulls(subtree.map(({ projects: _p, artifacts: _a, ...w }) => w))).toEqual(
      (asGraphql(restBody.workspaces) as Record<string, unknown>[]).map(strip),
    );
    expect(subtree.flatMap((w) => w.projects.map((p) => p.id)).sort()).toEqual(
      restBody.projects.map((p: { id: string }) => p.id).sort(),
    );
    expect(subtree.flatMap((w) => w.artifacts.nodes.map((a) => a.id)).sort()).toEqual(
      restBody.artifacts.map((a: { id: string }) => a.id).sort(),
    );
  });
});

describe('edges of the graph', () => {
  it('agent -> workspace, project, tools, skills, creator, versions and resolved relationship ends', async () => {
    const res = await gql(
      t,
      `{ agent(id: "ag-1") {
      id workspace { id } project { id } creator { id } versions { versionOrdinal isLatest }
      usedTools { id kind usedBy { id } } usedSkills { id kind usedBy { id } }
      relationships { outgoing { relType to { __typename id ... on Tool { toolName } } } }
      profileImage { contentType base64 } } }`,
    );
    expect(res.errors).toBeUndefined();
    const agent = res.data.agent;
    expect(agent.workspace).toEqual({ id: 'ws-a-team' });
    expect(agent.versions.map((v: { versionOrdinal: number }) => v.versionOrdinal)).toEqual([1, 2]);
    expect(agent.usedTools).toContainEqual({
      id: 'tl-1',
      kind: 'TOOL',
      usedBy: expect.arrayContaining([{ id: 'ag-1' }]),
    });
    expect(agent.usedSkills).toContainEqual({
      id: 'sk-1',
      kind: 'SKILL',
      usedBy: expect.arrayContaining([{ id: 'ag-1' }]),
    });
    expect(agent.relationships.outgoing).toContainEqual(
      expect.objectContaining({
        relType: 'USES_TOOL',
        to: expect.objectContaining({ __typename: 'Tool', id: 'tl-1' }),
      }),
    );
    expect(agent.profileImage.contentType).toMatch(/^image\//);
    const restImage = await t.app.inject({
      method: 'GET',
      url: '/agent/v1/agents/ag-1/profile-image',
      headers: await t.auth('u-admin'),
    });
    expect(Buffer.from(agent.profileImage.base64, 'base64')).toEqual(Buffer.from(restImage.json<number[]>()));
  });

  it('workspace -> parent, children, projects, members; user -> artifacts', async () => {
    const res = await gql(
      t,
      `{
      workspace(id: "ws-a-team") { parent { id } rootWorkspace { id } children { id } projects { id workspace { id } }
        members { role user { id } } artifacts(kind: AGENT) { totalCount nodes { id } } }
      user(id: "u-admin") { id artifactCount artifacts { totalCount nodes { id createdBy } } }
      viewer { kind orgId user { id } workspaces { id } }
    }`,
    );
    expect(res.errors).toBeUndefined();
    const ws = res.data.workspace;
    expect(ws.parent).toEqual({ id: 'ws-a' });
    expect(ws.children).toEqual([{ id: 'ws-a-sub' }]);
    expect(ws.projects).toContainEqual({ id: 'proj-a1', workspace: { id: 'ws-a-team' } });
    expect(ws.members).toContainEqual({ role: 'VIEWER', user: { id: 'u-viewer' } });
    expect(ws.artifacts.nodes.map((n: { id: string }) => n.id)).toContain('ag-1');
    for (const a of res.data.user.artifacts.nodes) expect(a.createdBy).toBe('u-admin');
    expect(res.data.viewer).toMatchObject({ kind: 'USER', orgId: 'org-a', user: { id: 'u-admin' } });
    expect(res.data.viewer.workspaces.map((w: { id: string }) => w.id).sort()).toEqual([
      'ws-a',
      'ws-a-other',
      'ws-a-sub',
      'ws-a-team',
    ]);
  });
});
