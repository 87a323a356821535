/**
 * The compiled executor (src/graphql/executor.ts, GRAPHQL_EXECUTOR=compiled, the default) answers
 * exactly as graphql-js does (GRAPHQL_EXECUTOR=standard): the same status and the same body, data
 * and errors (codes, messages, paths, locations), for every query of a corpus that covers lookups
 * refused and missing, null propagation, lists and nested edges, fragments, aliases, variables
 * (valid and not), directives and federation. Two apps on the same data, one of each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { chainBundle } from '../fixtures/chain-bundle.ts';
import { wideBundle } from './wide-bundle.ts';

let compiled: TestApp;
let standard: TestApp;
beforeAll(async () => {
  [compiled, standard] = await Promise.all([
    startTestApp({ env: { GRAPHQL_EXECUTOR: 'compiled' } }),
    startTestApp({ env: { GRAPHQL_EXECUTOR: 'standard' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([compiled.close(), standard.close()]);
});

async function ask(t: TestApp, query: string, variables: object | undefined, user: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await t.auth(user)), 'content-type': 'application/json' },
    payload: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  });
  return { status: res.statusCode, body: res.json<{ data?: unknown; errors?: { path?: unknown[] }[] }>() };
}

const ARTIFACT = `fragment A on Artifact { __typename id name kind workspaceId displayName
  workspace { id name } creator { id name } permissions { canRead canEdit canDelete }
  relationships { count outgoing { relType weight to { id name } } incoming { relType from { id } } } }`;

const CORPUS: { name: string; query: string; variables?: object }[] = [
  {
    name: 'lookups: own, refused, foreign and missing (null with 403 / 404 errors)',
    query: `{ own: agent(id: "ag-1") { id name } other: agent(id: "ag-3") { id } foreign: agent(id: "ag-b1") { id }
      missing: agent(id: "nope") { id } ws: workspace(id: "ws-a") { id } wsB: workspace(id: "ws-b") { id } }`,
  },
  {
    name: 'the nested agent search with tools, creator and relationship ends',
    query: `{ agentSearch(first: 50, sorts: [{ field: NAME }]) { totalCount pageInfo { hasNextPage endCursor }
      nodes { ...A ... on Agent { instructions modelId usedTools { id toolName serverId } usedSkills { id } identity { clientId credentialKind apiKey } } } } } ${ARTIFACT}`,
  },
  {
    name: 'an interface field by id with type conditions',
    query: `{ a: artifact(id: "tl-1") { ...A ... on Tool { toolName usedBy { id } } } s: artifact(id: "sk-1") { ...A } } ${ARTIFACT}`,
  },
  {
    name: 'variables, aliases, @skip and @include',
    query: `query($id: ID!, $n: Int, $yes: Boolean!, $no: Boolean!) {
      first: agent(id: $id) { id name @include(if: $yes) displayName @skip(if: $yes) }
      tools(first: $n) { totalCount nodes { id name @skip(if: $no) } }
      again: agent(id: $id) @include(if: $no) { id } }`,
    variables: { id: 'ag-1', n: 3, yes: true, no: false },
  },
  {
    name: 'a variable of the wrong type (graphql-js coerces it and answers 400)',
    query: 'query($n: Int) { tools(first: $n) { totalCount } }',
    variables: { n: 'three' },
  },
  {
    name: 'a required variable missing',
    query: 'query($id: ID!) { agent(id: $id) { id } }',
    variables: {},
  },
  {
    name: 'a page size over the limit (the handler refuses it)',
    query: '{ tools(first: -1) { totalCount } }',
  },
  {
    name: 'the viewer, its workspaces and their subtrees, counts and members',
    query: `{ viewer { kind orgId user { id name } workspaces { id name parentId parent { id } children { id }
      artifactCount artifactCountByKind { agent tool skill } memberCount } } }`,
  },
  {
    name: 'workspace export: projects, repos and artifacts',
    query: `{ workspace(id: "ws-a") { id subtree { id projects { id name } artifacts { totalCount nodes { id kind } } } } }`,
  },
  {
    name: 'users, tool aggregate and insight schemas',
    query: `{ users(first: 5) { totalCount nodes { id name } } toolAggregate(groupBy: [SERVER_ID]) { totalCount nodes { count } }
      insightSchemas { __typename } }`,
  },
  {
    name: 'federation _entities with refused and unknown representations (graphql-js)',
    query: `query($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Agent { id name } ... on Workspace { id } } }`,
    variables: {
      r: [
        { __typename: 'Agent', id: 'ag-1' },
        { __typename: 'Agent', id: 'ag-3' },
        { __typename: 'Agent', id: 'ag-b1' },
        { __typename: 'Workspace', id: 'ws-b' },
        { __typename: 'Agent', id: 'nope' },
        { __typename: 'Workspace', id: 'ws-a' },
      ],
    },
  },
];

describe('the compiled executor answers as graphql-js', () => {
  for (const { name, query, variables } of CORPUS) {
    it(name, async () => {
      for (const user of ['u-admin', 'u-viewer']) {
        const [fast, reference] = await Promise.all([
          ask(compiled, query, variables, user),
          ask(standard, query, variables, user),
        ]);
        expect(fast).toEqual(reference);
      }
    });
  }

  it('the corpus exercises what it claims: data, catalogue errors and request errors', async () => {
    const lookups = await ask(compiled, CORPUS[0]!.query, undefined, 'u-viewer');
    const codes = (lookups.body.errors ?? []).map((e) => (e as { extensions: { code: string } }).extensions.code);
    expect(codes.sort()).toEqual(['access_denied', 'access_denied', 'not_found', 'not_found', 'not_found']);
    const nested = await ask(compiled, CORPUS[1]!.query, undefined, 'u-admin');
    expect(nested.status).toBe(200);
    expect(JSON.stringify(nested.body.data)).toContain('"toolName"');
    const badVariable = await ask(compiled, CORPUS[4]!.query, CORPUS[4]!.variables, 'u-admin');
    expect(badVariable.status).toBe(400);
  });
});

describe('the compiled executor over a wide data set', () => {
  let wideCompiled: TestApp;
  let wideStandard: TestApp;
  beforeAll(async () => {
    [wideCompiled, wideStandard] = await Promise.all([
      startTestApp({ bundle: wideBundle(120, 60), env: { GRAPHQL_EXECUTOR: 'compiled' } }),
      startTestApp({ bundle: wideBundle(120, 60), env: { GRAPHQL_EXECUTOR: 'standard' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([wideCompiled.close(), wideStandard.close()]);
  });

  it('answers pages of 100 agents with their edges as graphql-js does', async () => {
    const query = `{ agentSearch(first: 100, sorts: [{ field: NAME }]) { totalCount nodes { ...A ... on Agent { usedTools { id toolName } } } } } ${ARTIFACT}`;
    const [fast, reference] = await Promise.all([
      ask(wideCompiled, query, undefined, 'u-admin'),
      ask(wideStandard, query, undefined, 'u-admin'),
    ]);
    expect(fast.status).toBe(200);
    expect((fast.body.data as { agentSearch: { nodes: unknown[] } }).agentSearch.nodes).toHaveLength(100);
    expect(fast).toEqual(reference);
  });
});

describe('the compiled executor past the list budget', () => {
  let lowCompiled: TestApp;
  let lowStandard: TestApp;
  beforeAll(async () => {
    const env = { GRAPHQL_MAX_COST: '1000' };
    [lowCompiled, lowStandard] = await Promise.all([
      startTestApp({ bundle: chainBundle(50), env: { ...env, GRAPHQL_EXECUTOR: 'compiled' } }),
      startTestApp({ bundle: chainBundle(50), env: { ...env, GRAPHQL_EXECUTOR: 'standard' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([lowCompiled.close(), lowStandard.close()]);
  });

  it('fails the list that outgrows it with OPERATION_TOO_LARGE, as graphql-js does', async () => {
    const query = '{ workspace(id: "ws-a") { id subtree { subtree { id } } } }';
    const [fast, reference] = await Promise.all([
      ask(lowCompiled, query, undefined, 'u-admin'),
      ask(lowStandard, query, undefined, 'u-admin'),
    ]);
    expect(fast.status).toBe(400);
    expect(JSON.stringify(fast.body.errors)).toContain('"code":"OPERATION_TOO_LARGE"');
    expect(fast).toEqual(reference);
  });
});
