/**
 * The authorization matrix of DESIGN §6, generated from one table: every operation that takes a
 * resource by id, on every transport (REST, GraphQL root fields, federation `_entities`), for every
 * kind of caller, against targets that are readable, discoverable but unreadable (same organization),
 * of another organization, and absent. Expected: readable -> the resource; same organization but
 * unreadable -> 403 access_denied; another organization or absent -> 404 not_found. Callers that fail
 * authentication get their 401/403 code whatever the target. OTLP ingestion is the same matrix on
 * write access: a span sent to a workspace the caller may write to is stored, to any other workspace
 * rejected in the partial-success answer, and a caller who may write nowhere gets 403 before its
 * body is read. Lists (REST and GraphQL, with nested relationship edges) show exactly the readable
 * resources; the fixture has a relationship that crosses into a workspace some callers cannot read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { abuseBundle, otlpBody } from '../abuse/fixture.ts';
import { TEST_API_KEY, addSuspendedOrg } from '../fixtures/small-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const END = Date.UTC(2026, 9, 1) / 1000;
const REVOKED_KEY = 'agk_revoked000000000000000000000000';

/** Workspace of each target resource; `null`: absent. */
const WORKSPACE: Record<string, string | null> = {
  'ws-a-team': 'ws-a-team',
  'ws-a-sub': 'ws-a-sub',
  'ws-a-other': 'ws-a-other',
  'ws-b': 'ws-b',
  'ws-none': null,
  'ag-1': 'ws-a-team',
  'ag-2': 'ws-a-sub',
  'ag-3': 'ws-a-other',
  'ag-b1': 'ws-b',
  'ag-none': null,
  'sk-1': 'ws-a-team',
  'sk-2': 'ws-a-sub',
  'sk-b1': 'ws-b',
  'sk-none': null,
  'repo-a-team': 'ws-a-team',
  'repo-a-other': 'ws-a-other',
  'repo-b': 'ws-b',
  'repo-none': null,
};
const ORG_A = new Set(['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other']);

interface Caller {
  name: string;
  header: () => Promise<string>;
  /** The workspaces it reads and those it may write to; or the authentication failure it gets. */
  reads?: string[];
  writes?: string[];
  org?: Set<string>;
  fails?: { status: number; code: string };
}

let t: TestApp;
let expired: string;
let clientToken: string;
const TEAM = ['ws-a-team', 'ws-a-sub'];
const CALLERS: Caller[] = [
  { name: 'org admin', header: () => bearer('u-admin'), reads: [...ORG_A], writes: [...ORG_A], org: ORG_A },
  { name: 'workspace admin', header: () => bearer('u-wadmin'), reads: TEAM, writes: TEAM, org: ORG_A },
  { name: 'workspace viewer', header: () => bearer('u-viewer'), reads: TEAM, writes: [], org: ORG_A },
  {
    name: 'editor of a sub-workspace only',
    header: () => bearer('u-editor'),
    reads: ['ws-a-sub'],
    writes: ['ws-a-sub'],
    org: ORG_A,
  },
  {
    name: 'viewer of a workspace, editor of its sub-workspace',
    header: () => bearer('u-mixed'),
    reads: TEAM,
    writes: ['ws-a-sub'],
    org: ORG_A,
  },
  {
    name: 'member of a sibling workspace only',
    header: () => bearer('u-sib'),
    reads: ['ws-a-other'],
    writes: [],
    org: ORG_A,
  },
  {
    name: 'user of another organization',
    header: () => bearer('u-b', 'org-b'),
    reads: ['ws-b'],
    writes: ['ws-b'],
    org: new Set(['ws-b']),
  },
  {
    name: 'service account by client token',
    header: async () => `Bearer ${clientToken}`,
    reads: TEAM,
    writes: TEAM,
    org: ORG_A,
  },
  {
    name: 'service account by API key',
    header: async () => `Bearer ${TEST_API_KEY}`,
    reads: ['ws-a-sub'],
    writes: ['ws-a-sub'],
    org: ORG_A,
  },
  { name: 'suspended user', header: () => bearer('u-susp'), fails: { status: 403, code: 'account_suspended' } },
  {
    name: 'user of a suspended organization',
    header: () => bearer('u-s', 'org-s'),
    fails: { status: 403, code: 'account_suspended' },
  },
  {
    name: 'revoked API key',
    header: async () => `Bearer ${REVOKED_KEY}`,
    fails: { status: 401, code: 'invalid_api_key' },
  },
  { name: 'expired token', header: async () => `Bearer ${expired}`, fails: { status: 401, code: 'token_expired' } },
];

async function bearer(sub: string, org = 'org-a'): Promise<string> {
  return (await t.auth(sub, org)).authorization;
}

function expected(caller: Caller, target: string): { status: number; code?: string } {
  if (caller.fails !== undefined) return caller.fails;
  const ws = WORKSPACE[target] ?? null;
  if (ws === null || !(caller.org ?? new Set()).has(ws)) return { status: 404, code: 'not_found' };
  return (caller.reads ?? []).includes(ws) ? { status: 200 } : { status: 403, code: 'access_denied' };
}

interface Operation {
  name: string;
  targets: string[];
  /** Status and code of the answer for this target (GraphQL: from the error's extensions). */
  call: (header: string, target: string) => Promise<{ status: number; code?: string }>;
  /** The expected answer, when not {@link expected}'s read rule. */
  expects?: (caller: Caller, target: string) => { status: number; code?: string };
}

/** Ingestion: stored where the caller may write; elsewhere rejected in the answer; 403 when nowhere. */
function expectedWrite(caller: Caller, target: string): { status: number; code?: string } {
  if (caller.fails !== undefined) return caller.fails;
  if ((caller.writes ?? []).length === 0) return { status: 403, code: 'access_denied' };
  return (caller.writes ?? []).includes(target) ? { status: 200, code: 'stored' } : { status: 200, code: 'rejected' };
}

let spanSeq = 0;
/** Sends one span to `workspace`; 200 answers are `stored` (and found in the store) or `rejected`. */
async function ingest(header: string, workspace: string) {
  spanSeq++;
  const start = BigInt(END - 3600) * 1_000_000_000n;
  const span = {
    traceId: `${spanSeq.toString(16).padStart(8, '0')}${'c'.repeat(24)}`,
    spanId: spanSeq.toString(16).padStart(16, 'd'),
    name: 'chat',
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 1_000_000n),
    attributes: [{ key: 'gen_ai.operation.name', value: { stringValue: 'chat' } }],
  };
  const before = await t.traces.countSpans();
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers: { authorization: header, 'content-type': 'application/json' },
    payload: otlpBody([span], { 'workspace.id': workspace }),
  });
  if (res.statusCode !== 200) return { status: res.statusCode, code: res.json<{ code: string }>().code };
  const answer = res.json<{ partialSuccess?: { rejectedSpans: number; errorMessage: string } }>();
  const stored = (await t.traces.countSpans()) - before;
  if (answer.partialSuccess === undefined) {
    expect(answer).toEqual({});
    expect(stored, 'an accepted span is stored').toBe(1);
    return { status: 200, code: 'stored' };
  }
  expect(answer.partialSuccess).toEqual({
    rejectedSpans: 1,
    errorMessage: `1 span(s): no permission to write to workspace "${workspace}"`,
  });
  expect(stored, 'a rejected span is not stored').toBe(0);
  return { status: 200, code: 'rejected' };
}

async function rest(method: 'GET' | 'POST', url: string, header: string, payload?: object) {
  const res = await t.app.inject({
    method,
    url,
    headers: { authorization: header, 'content-type': 'application/json' },
    ...(payload !== undefined ? { payload } : {}),
  });
  return { status: res.statusCode, ...(res.statusCode === 200 ? {} : { code: res.json<{ code: string }>().code }) };
}

async function graph(header: string, query: string, path: (data: Record<string, unknown>) => unknown) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { authorization: header, 'content-type': 'application/json' },
    payload: { query },
  });
  const body = res.json<{
    data?: Record<string, unknown> | null;
    errors?: { extensions: { code: string; http?: { status: number } } }[];
  }>();
  const error = body.errors?.[0]?.extensions;
  if (error !== undefined) return { status: error.http?.status ?? res.statusCode, code: error.code };
  expect(path(body.data ?? {}), 'a resource without an error').toBeTruthy();
  return { status: 200 };
}

const STATS = {
  start_time_unix_seconds: END - 86400,
  end_time_unix_seconds: END,
  request_type: 'scalar',
  queries: [{ name: 'n', measure: 'spans' }],
};
const workspaces = ['ws-a-team', 'ws-a-sub', 'ws-a-other', 'ws-b', 'ws-none'];
const agents = ['ag-1', 'ag-2', 'ag-3', 'ag-b1', 'ag-none'];
const skills = ['sk-1', 'sk-2', 'sk-b1', 'sk-none'];
const repos = ['repo-a-team', 'repo-a-other', 'repo-b', 'repo-none'];

const OPERATIONS: Operation[] = [
  {
    name: 'REST workspace export',
    targets: workspaces,
    call: (h, id) => rest('GET', `/registry/v1/workspaces/${id}/export`, h),
  },
  {
    name: 'REST profile image',
    targets: agents,
    call: (h, id) => rest('GET', `/agent/v1/agents/${id}/profile-image`, h),
  },
  {
    name: 'REST trace statistics',
    targets: skills,
    call: (h, id) => rest('POST', `/skill/v1/skills/${id}/traces/stats/query`, h, STATS),
  },
  {
    name: 'GraphQL workspace(id)',
    targets: workspaces,
    call: (h, id) => graph(h, `{ workspace(id: "${id}") { id } }`, (d) => d.workspace),
  },
  {
    name: 'GraphQL agent(id)',
    targets: agents,
    call: (h, id) => graph(h, `{ agent(id: "${id}") { id } }`, (d) => d.agent),
  },
  {
    name: 'GraphQL skill(id)',
    targets: skills,
    call: (h, id) => graph(h, `{ skill(id: "${id}") { id } }`, (d) => d.skill),
  },
  {
    name: 'federation _entities Agent',
    targets: agents,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "Agent", id: "${id}"}]) { ... on Agent { id } } }`,
        (d) => (d._entities as unknown[])[0],
      ),
  },
  {
    name: 'federation _entities Workspace',
    targets: workspaces,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "Workspace", id: "${id}"}]) { ... on Workspace { id } } }`,
        (d) => (d._entities as unknown[])[0],
      ),
  },
  {
    name: 'GraphQL repo(id)',
    targets: repos,
    call: (h, id) => graph(h, `{ repo(id: "${id}") { id } }`, (d) => d.repo),
  },
  {
    name: 'federation _entities Repo',
    targets: repos,
    call: (h, id) =>
      graph(
        h,
        `{ _entities(representations: [{__typename: "Repo", id: "${id}"}]) { ... on Repo { id } } }`,
        (d) => (d._entities as unknown[])[0],
      ),
  },
  {
    name: 'OTLP ingestion',
    targets: [...ORG_A, 'ws-b', 'ws-none'],
    call: ingest,
    expects: expectedWrite,
  },
];

let bundle: ReturnType<typeof abuseBundle>;
beforeAll(async () => {
  bundle = abuseBundle();
  const ag3 = bundle.artifacts.find((a) => a.id === 'ag-3') as Record<string, unknown>;
  ag3.identity = { client_id: 'key-ag-3', credential_kind: 'api_key', api_key: REVOKED_KEY, revoked: true };
  const t0 = '2026-01-01T00:00:00Z';
  const user = (id: string, org = 'org-a') => ({ id, org_id: org, created_at: t0, updated_at: t0 });
  bundle.users.push(user('u-wadmin'), user('u-mixed'), user('u-sib'), user('u-s', 'org-s'));
  bundle.memberships.push(
    { workspace_id: 'ws-a-team', user_id: 'u-wadmin', role: 'admin' },
    { workspace_id: 'ws-a-team', user_id: 'u-mixed', role: 'viewer' },
    { workspace_id: 'ws-a-sub', user_id: 'u-mixed', role: 'editor' },
    { workspace_id: 'ws-a-other', user_id: 'u-sib', role: 'viewer' },
    { workspace_id: 'ws-s', user_id: 'u-s', role: 'admin' },
  );
  addSuspendedOrg(bundle);
  // ag-1 (ws-a-team) uses tl-4 (ws-a-other): an edge into a workspace most callers cannot read.
  bundle.relationships.push({
    from: { id: 'ag-1', kind: 'agent' },
    to: { id: 'tl-4', kind: 'tool' },
    rel_type: 'uses_tool',
    provenance: 'declared',
    relationship_status: 'active',
  });
  t = await startTestApp({ bundle });
  const issuer = await loadDevIssuer(t.dataDir);
  expired = await issuer.mint({ sub: 'u-admin', org: 'org-a', ttlSeconds: -3600 });
  clientToken = await issuer.mint({ sub: 'client-ag-1', org: 'org-a', claims: { client_id: 'client-ag-1' } });
});
afterAll(async () => {
  await t.close();
});

describe('authorization matrix (DESIGN §6)', () => {
  for (const op of OPERATIONS) {
    for (const caller of CALLERS) {
      it(`${op.name} as ${caller.name}`, async () => {
        const header = await caller.header();
        const got: Record<string, string> = {};
        const want: Record<string, string> = {};
        for (const target of op.targets) {
          const answer = await op.call(header, target);
          const expect_ = (op.expects ?? expected)(caller, target);
          got[target] = `${answer.status} ${answer.code ?? ''}`.trim();
          want[target] = `${expect_.status} ${expect_.code ?? ''}`.trim();
        }
        expect(got).toEqual(want);
      });
    }
  }
});

/** The ids of the bundle's artifacts (any version) of this kind in these workspaces, sorted. */
function readable(kind: string, reads: string[]): string[] {
  const ids = bundle.artifacts.filter((a) => a.kind === kind && reads.includes(a.workspace_id)).map((a) => a.id);
  return [...new Set(ids)].sort();
}

describe('lists and nested edges show exactly the readable resources', () => {
  for (const caller of CALLERS.filter((c) => c.fails === undefined)) {
    it(`as ${caller.name}`, async () => {
      const reads = caller.reads ?? [];
      const headers = { authorization: await caller.header(), 'content-type': 'application/json' };
      const tools = await t.app.inject({ method: 'GET', url: '/mcp/v1/tools?limit=100', headers });
      const search = await t.app.inject({ method: 'POST', url: '/agent/v1/agents/search', headers, payload: {} });
      const graph = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers,
        payload: {
          query:
            '{ agentSearch(first: 50) { nodes { id relationships { outgoing { to { id } } } usedTools { id } } } tools(first: 100) { nodes { id } } }',
        },
      });
      const items = (r: typeof tools) =>
        r
          .json<{ items: { id: string }[] }>()
          .items.map((i) => i.id)
          .sort();
      expect([tools.statusCode, search.statusCode, graph.statusCode]).toEqual([200, 200, 200]);
      expect(items(tools), 'REST tools').toEqual(readable('tool', reads));
      expect(items(search), 'REST agent search').toEqual(readable('agent', reads));
      const data = graph.json<{
        data: {
          agentSearch: {
            nodes: { id: string; relationships: { outgoing: { to: { id: string } }[] }; usedTools: { id: string }[] }[];
          };
          tools: { nodes: { id: string }[] };
        };
      }>().data;
      expect(data.tools.nodes.map((n) => n.id).sort(), 'GraphQL tools').toEqual(readable('tool', reads));
      expect(data.agentSearch.nodes.map((n) => n.id).sort(), 'GraphQL agentSearch').toEqual(readable('agent', reads));
      const visible = new Set(bundle.artifacts.filter((a) => reads.includes(a.workspace_id)).map((a) => a.id));
      for (const agent of data.agentSearch.nodes) {
        const edges = bundle.relationships.filter((r) => r.from.id === agent.id && visible.has(r.to.id));
        expect(agent.relationships.outgoing.map((r) => r.to.id).sort(), `edges of ${agent.id}`).toEqual(
          edges.map((r) => r.to.id).sort(),
        );
        expect(agent.usedTools.map((x) => x.id).sort(), `usedTools of ${agent.id}`).toEqual(
          edges
            .filter((r) => r.rel_type === 'uses_tool')
            .map((r) => r.to.id)
            .sort(),
        );
      }
    });
  }

  it('the fixture crosses: an edge some callers see and others do not', () => {
    const ag1 = bundle.relationships.filter((r) => r.from.id === 'ag-1').map((r) => r.to.id);
    expect(ag1).toContain('tl-4');
    expect(readable('tool', TEAM)).not.toContain('tl-4');
    expect(readable('agent', TEAM)).toContain('ag-1');
  });
});
