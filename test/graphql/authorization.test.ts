/**
 * The authorization of DESIGN §6 over GraphQL and federation `_entities`: lists hold readable
 * items only; by id, an object the caller cannot discover is null with not_found (404), one it
 * can discover but not read is null with access_denied (403); another org's ids never resolve.
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

const ENTITIES = `query($r: [_Any!]!) { _entities(representations: $r) {
  __typename ... on Agent { id name } ... on Tool { id name } ... on Workspace { id name } ... on User { id } ... on Project { id } } }`;

const ids = (nodes: { id: string }[]) => nodes.map((n) => n.id).sort();

describe('GraphQL authorization', () => {
  it('lists only readable items: a viewer sees its subtree only', async () => {
    const res = await gql(
      t,
      '{ agentSearch { totalCount nodes { id } } viewer { workspaces { id } } }',
      undefined,
      'u-viewer',
    );
    expect(res.errors).toBeUndefined();
    expect(ids(res.data.agentSearch.nodes)).toEqual(['ag-1', 'ag-2']);
    expect(res.data.agentSearch.totalCount).toBe(2);
    expect(ids(res.data.viewer.workspaces)).toEqual(['ws-a-sub', 'ws-a-team']);
  });

  it('a user without membership reads nothing but is not refused', async () => {
    const res = await gql(t, '{ agentSearch { totalCount } tools { totalCount } }', undefined, 'u-none');
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ agentSearch: { totalCount: 0 }, tools: { totalCount: 0 } });
  });

  it('by id: not discoverable -> null + not_found 404; discoverable, unreadable -> null + access_denied 403', async () => {
    const res = await gql(
      t,
      '{ own: agent(id: "ag-1") { id } other: agent(id: "ag-3") { id } foreign: agent(id: "ag-b1") { id } missing: agent(id: "nope") { id } ws: workspace(id: "ws-a") { id } wsB: workspace(id: "ws-b") { id } }',
      undefined,
      'u-viewer',
    );
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ own: { id: 'ag-1' }, other: null, foreign: null, missing: null, ws: null, wsB: null });
    expect(errorCodes(res)).toEqual({
      other: 'access_denied',
      foreign: 'not_found',
      missing: 'not_found',
      ws: 'access_denied',
      wsB: 'not_found',
    });
    const statuses = Object.fromEntries((res.errors ?? []).map((e) => [e.path?.[0], e.extensions.http?.status]));
    expect(statuses).toEqual({ other: 403, foreign: 404, missing: 404, ws: 403, wsB: 404 });
  });

  it('a tool id asked for as an agent is not_found, as over REST', async () => {
    const res = await gql(t, '{ agent(id: "tl-1") { id } }');
    expect(errorCodes(res)).toEqual({ agent: 'not_found' });
  });

  it('edges hold readable objects only: a viewer cannot follow parent to an unreadable workspace', async () => {
    const res = await gql(
      t,
      '{ workspace(id: "ws-a-team") { id parentId parent { id } rootWorkspace { id } children { id } } }',
      undefined,
      'u-viewer',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.workspace).toEqual({
      id: 'ws-a-team',
      parentId: 'ws-a',
      parent: null,
      rootWorkspace: null,
      children: [{ id: 'ws-a-sub' }],
    });
  });

  it('relationships show only ends the caller can read', async () => {
    const admin = await gql(t, '{ agent(id: "ag-1") { relationships { count } } }');
    const viewer = await gql(
      t,
      '{ agent(id: "ag-1") { relationships { count outgoing { to { id workspaceId } } } } }',
      undefined,
      'u-viewer',
    );
    expect(viewer.errors).toBeUndefined();
    expect(viewer.data.agent.relationships.count).toBeLessThanOrEqual(admin.data.agent.relationships.count);
    for (const rel of viewer.data.agent.relationships.outgoing)
      expect(['ws-a-team', 'ws-a-sub']).toContain(rel.to.workspaceId);
  });

  it('another org cannot see org-a users', async () => {
    const res = await gql(t, '{ user(id: "u-admin") { id } users { nodes { id } } }', undefined, 'u-b', 'org-b');
    expect(res.data.user).toBeNull();
    expect(errorCodes(res)).toEqual({ user: 'not_found' });
    expect(ids(res.data.users.nodes)).toEqual(['u-b']);
  });

  it('without a token the answer is a GraphQL error with token_missing and HTTP 401', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      payload: { query: '{ viewer { orgId } }' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().errors[0].extensions).toMatchObject({ code: 'token_missing', http: { status: 401 } });
  });
});

describe('federation _entities authorization', () => {
  it('resolves own-org readable entities and refuses other orgs with not_found', async () => {
    const res = await gql(t, ENTITIES, {
      r: [
        { __typename: 'Agent', id: 'ag-1' },
        { __typename: 'Agent', id: 'ag-b1' },
        { __typename: 'Tool', id: 'tl-b1' },
        { __typename: 'Workspace', id: 'ws-b' },
        { __typename: 'User', id: 'u-b' },
        { __typename: 'Workspace', id: 'ws-a-team' },
        { __typename: 'Project', id: 'proj-a1' },
      ],
    });
    expect(res.data._entities).toEqual([
      { __typename: 'Agent', id: 'ag-1', name: expect.any(String) },
      null,
      null,
      null,
      null,
      { __typename: 'Workspace', id: 'ws-a-team', name: expect.any(String) },
      { __typename: 'Project', id: 'proj-a1' },
    ]);
    expect(errorCodes(res)).toEqual({
      '_entities.1': 'not_found',
      '_entities.2': 'not_found',
      '_entities.3': 'not_found',
      '_entities.4': 'not_found',
    });
  });

  it('a viewer gets access_denied for entities of its org outside its subtree', async () => {
    const res = await gql(
      t,
      ENTITIES,
      {
        r: [
          { __typename: 'Agent', id: 'ag-3' },
          { __typename: 'Agent', id: 'ag-2' },
        ],
      },
      'u-viewer',
    );
    expect(res.data._entities).toEqual([null, { __typename: 'Agent', id: 'ag-2', name: expect.any(String) }]);
    expect(errorCodes(res)).toEqual({ '_entities.0': 'access_denied' });
  });

  it("refuses malformed representations as the client's mistake (422 invalid_field with the position), never a 500", async () => {
    const cases: [unknown[], string][] = [
      [[[1, 2]], '/representations/0'],
      [['x'], '/representations/0'],
      [
        [
          { __typename: 'Agent', id: 'ag-1' },
          { __typename: 'Nope', id: '1' },
        ],
        '/representations/1/__typename',
      ],
      [[{ id: 'ag-1' }], '/representations/0/__typename'],
      [[{ __typename: 'Agent' }], '/representations/0/id'],
      [[{ __typename: 'Agent', id: 5 }], '/representations/0/id'],
    ];
    for (const [r, field] of cases) {
      const res = await gql(t, ENTITIES, { r });
      expect(res.errors?.[0]?.extensions, JSON.stringify(r)).toMatchObject({
        code: 'invalid_field',
        field,
        http: { status: 422 },
      });
    }
  });
});
