/**
 * Source repositories over every transport: a repository is read by whoever can
 * read its workspace; its artifacts may sit in other workspaces and are listed only when readable;
 * an artifact's `repo` edge is null (GraphQL) or absent (REST export) when the repository is not
 * readable. The fixture (test/fixtures/small-bundle.ts) crosses both ways: repo-a-team (ws-a-team)
 * holds ag-3 of ws-a-other, and tl-2 of ws-a-sub comes from repo-a-other (ws-a-other); u-viewer
 * reads ws-a-team and ws-a-sub only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { countingStore, errorCodes, gql } from './helpers.ts';

const counter = countingStore();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ wrapRegistry: (store) => counter.wrap(store) });
});
afterAll(async () => {
  await t.close();
});

const REPO = `query($id: ID!) { repo(id: $id) { id name displayName sourceUri defaultBranch workspaceId createdBy
  workspace { id } artifacts { totalCount nodes { id } } } }`;

describe('Repo over GraphQL', () => {
  it('an admin reads a repository with every field and all the artifacts synced from it', async () => {
    const res = await gql(t, REPO, { id: 'repo-a-team' });
    expect(res.errors).toBeUndefined();
    expect(res.data.repo).toEqual({
      id: 'repo-a-team',
      name: 'team-agents',
      displayName: 'Team agents',
      sourceUri: 'https://git.a.example/team-agents.git',
      defaultBranch: 'main',
      workspaceId: 'ws-a-team',
      createdBy: 'u-admin',
      workspace: { id: 'ws-a-team' },
      artifacts: { totalCount: 2, nodes: [{ id: 'ag-2' }, { id: 'ag-3' }] },
    });
  });

  it('a viewer of the repository workspace lists only the artifacts it can read', async () => {
    const res = await gql(t, REPO, { id: 'repo-a-team' }, 'u-viewer');
    expect(res.errors).toBeUndefined();
    expect(res.data.repo.artifacts).toEqual({ totalCount: 1, nodes: [{ id: 'ag-2' }] });
  });

  it('by id: unreadable workspace -> access_denied 403, other organization or unknown -> not_found 404', async () => {
    const res = await gql(
      t,
      '{ other: repo(id: "repo-a-other") { id } foreign: repo(id: "repo-b") { id } missing: repo(id: "nope") { id } }',
      undefined,
      'u-viewer',
    );
    expect(res.data).toEqual({ other: null, foreign: null, missing: null });
    expect(errorCodes(res)).toEqual({ other: 'access_denied', foreign: 'not_found', missing: 'not_found' });
    const statuses = Object.fromEntries((res.errors ?? []).map((e) => [e.path?.[0], e.extensions.http?.status]));
    expect(statuses).toEqual({ other: 403, foreign: 404, missing: 404 });
  });

  it("an artifact's repo edge is null, without an error, when the caller cannot read the repository", async () => {
    const query = '{ tool(id: "tl-2") { repoId repo { id } } agent(id: "ag-2") { repoId repo { id name } } }';
    const viewer = await gql(t, query, undefined, 'u-viewer');
    expect(viewer.errors).toBeUndefined();
    expect(viewer.data).toEqual({
      tool: { repoId: 'repo-a-other', repo: null },
      agent: { repoId: 'repo-a-team', repo: { id: 'repo-a-team', name: 'team-agents' } },
    });
    const admin = await gql(t, query);
    expect(admin.data.tool).toEqual({ repoId: 'repo-a-other', repo: { id: 'repo-a-other' } });
    const none = await gql(t, '{ agent(id: "ag-1") { repoId repo { id } } }');
    expect(none.data.agent).toEqual({ repoId: null, repo: null });
  });

  it('a workspace lists the repositories it holds directly', async () => {
    const res = await gql(
      t,
      '{ a: workspace(id: "ws-a-team") { repos { id } } b: workspace(id: "ws-a") { repos { id } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ a: { repos: [{ id: 'repo-a-team' }] }, b: { repos: [] } });
  });

  it('federation _entities resolves Repo with the same authorization', async () => {
    const res = await gql(
      t,
      'query($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Repo { id name } } }',
      {
        r: [
          { __typename: 'Repo', id: 'repo-a-team' },
          { __typename: 'Repo', id: 'repo-a-other' },
          { __typename: 'Repo', id: 'repo-b' },
        ],
      },
      'u-viewer',
    );
    expect(res.data._entities).toEqual([{ __typename: 'Repo', id: 'repo-a-team', name: 'team-agents' }, null, null]);
    expect(errorCodes(res)).toEqual({ '_entities.1': 'access_denied', '_entities.2': 'not_found' });
  });

  it('batches: repositories of every artifact of a list in one store call, their artifacts in one more', async () => {
    counter.reset();
    const res = await gql(t, '{ tools { nodes { id repo { id artifacts { nodes { id } } } } } }');
    expect(res.errors).toBeUndefined();
    const repos = res.data.tools.nodes.map((n: { repo: { id: string } | null }) => n.repo?.id ?? null);
    expect(repos.filter((r: string | null) => r !== null)).toEqual(['repo-a-other']);
    expect(counter.calls().getRepos).toBe(1);
    expect(counter.calls().listArtifactsOfRepos).toBe(1);
  });
});

describe('repositories over REST', () => {
  interface Exported {
    artifacts: { id: string; repo_id?: string; repo?: Record<string, unknown> }[];
  }
  const exportOf = async (ws: string, user: string) => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/registry/v1/workspaces/${ws}/export`,
      headers: await t.auth(user, 'org-a'),
    });
    return res.json<Exported>();
  };

  it('the export carries the repo object of a readable repository, and only then', async () => {
    const viewer = await exportOf('ws-a-team', 'u-viewer');
    const byId = new Map(viewer.artifacts.map((a) => [a.id, a]));
    expect(byId.get('ag-2')?.repo).toEqual({
      display_name: 'Team agents',
      id: 'repo-a-team',
      name: 'team-agents',
      source_uri: 'https://git.a.example/team-agents.git',
      workspace_id: 'ws-a-team',
    });
    expect(byId.get('tl-2')?.repo_id).toBe('repo-a-other');
    expect(byId.get('tl-2')).not.toHaveProperty('repo');
    expect(byId.get('ag-1')).not.toHaveProperty('repo');
    const admin = await exportOf('ws-a-team', 'u-admin');
    expect(admin.artifacts.find((a) => a.id === 'tl-2')?.repo).toMatchObject({
      id: 'repo-a-other',
      workspace_id: 'ws-a-other',
    });
  });

  it('the tool list answers repo_id as stored, never a repo object', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/mcp/v1/tools?limit=200',
      headers: await t.auth('u-viewer', 'org-a'),
    });
    expect(res.statusCode).toBe(200);
    const tools = res.json<{ items: { id: string; repo_id?: string }[] }>().items;
    expect(tools.map((x) => [x.id, x.repo_id ?? null])).toEqual([
      ['tl-1', null],
      ['tl-2', 'repo-a-other'],
      ['tl-3', null],
    ]);
    expect(res.body).not.toContain('"repo":');
  });
});
