/**
 * The authorization matrix of DESIGN §6, generated from one table: every operation that takes a
 * resource by id, on every transport (REST, GraphQL root fields, federation `_entities`), for every
 * kind of caller, against targets that are readable, discoverable but unreadable (same organization),
 * of another organization, and absent. Expected: readable -> the resource; same organization but
 * unreadable -> 403 access_denied; another organization or absent -> 404 not_found. Callers that fail
 * authentication get their 401/403 code whatever the target.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { abuseBundle } from '../abuse/fixture.ts';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
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
};
const ORG_A = new Set(['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other']);

interface Caller {
  name: string;
  header: () => Promise<string>;
  /** The workspaces it reads; or the authentication failure it gets. */
  reads?: string[];
  org?: Set<string>;
  fails?: { status: number; code: string };
}

let t: TestApp;
let expired: string;
const CALLERS: Caller[] = [
  { name: 'org admin', header: () => bearer('u-admin'), reads: [...ORG_A], org: ORG_A },
  { name: 'workspace viewer', header: () => bearer('u-viewer'), reads: ['ws-a-team', 'ws-a-sub'], org: ORG_A },
  { name: 'editor of a sub-workspace only', header: () => bearer('u-editor'), reads: ['ws-a-sub'], org: ORG_A },
  {
    name: 'user of another organization',
    header: () => bearer('u-b', 'org-b'),
    reads: ['ws-b'],
    org: new Set(['ws-b']),
  },
  { name: 'service account by API key', header: async () => `Bearer ${TEST_API_KEY}`, reads: ['ws-a-sub'], org: ORG_A },
  { name: 'suspended user', header: () => bearer('u-susp'), fails: { status: 403, code: 'account_suspended' } },
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
];

beforeAll(async () => {
  const bundle = abuseBundle();
  const ag3 = bundle.artifacts.find((a) => a.id === 'ag-3') as Record<string, unknown>;
  ag3.identity = { client_id: 'key-ag-3', credential_kind: 'api_key', api_key: REVOKED_KEY, revoked: true };
  t = await startTestApp({ bundle });
  expired = await (await loadDevIssuer(t.dataDir)).mint({ sub: 'u-admin', org: 'org-a', ttlSeconds: -3600 });
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
          const expect_ = expected(caller, target);
          got[target] = `${answer.status} ${answer.code ?? ''}`.trim();
          want[target] = `${expect_.status} ${expect_.code ?? ''}`.trim();
        }
        expect(got).toEqual(want);
      });
    }
  }
});
