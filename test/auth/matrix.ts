/**
 * The fixture and callers of the authorization matrix (DESIGN §6), shared by the matrix files: each
 * file lists its operations and calls {@link runMatrix}; the expected answer of every caller for
 * every target follows from the caller's readable workspaces and the target's workspace
 * ({@link WORKSPACE}), unless an operation gives its own rule.
 */
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { abuseBundle, otlpBody } from '../abuse/fixture.ts';
import { TEST_API_KEY, addSuspendedOrg } from '../fixtures/small-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

export const END = Date.UTC(2026, 9, 1) / 1000;
const REVOKED_KEY = 'agk_revoked000000000000000000000000';

/** Workspace of each target resource; `null`: absent. */
export const WORKSPACE: Record<string, string | null> = {
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
export const ORG_A = new Set(['ws-a', 'ws-a-team', 'ws-a-sub', 'ws-a-other']);

export interface Caller {
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
export const TEAM = ['ws-a-team', 'ws-a-sub'];
export const CALLERS: Caller[] = [
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

export function expected(caller: Caller, target: string): { status: number; code?: string } {
  if (caller.fails !== undefined) return caller.fails;
  const ws = WORKSPACE[target] ?? null;
  if (ws === null || !(caller.org ?? new Set()).has(ws)) return { status: 404, code: 'not_found' };
  return (caller.reads ?? []).includes(ws) ? { status: 200 } : { status: 403, code: 'access_denied' };
}

export interface Operation {
  name: string;
  targets: string[];
  /** Status and code of the answer for this target (GraphQL: from the error's extensions). */
  call: (header: string, target: string, caller: Caller) => Promise<{ status: number; code?: string }>;
  /** The expected answer, when not {@link expected}'s read rule. */
  expects?: (caller: Caller, target: string) => { status: number; code?: string };
}

/** Ingestion: stored where the caller may write; elsewhere rejected in the answer; 403 when nowhere. */
export function expectedWrite(caller: Caller, target: string): { status: number; code?: string } {
  if (caller.fails !== undefined) return caller.fails;
  if ((caller.writes ?? []).length === 0) return { status: 403, code: 'access_denied' };
  return (caller.writes ?? []).includes(target) ? { status: 200, code: 'stored' } : { status: 200, code: 'rejected' };
}

let spanSeq = 0;
/** Sends one span to `workspace`; 200 answers are `stored` (and found in the store) or `rejected`. */
export async function ingest(header: string, workspace: string) {
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

/** A REST call; an empty `header` sends no Authorization at all (an anonymous request). */
export async function rest(method: 'GET' | 'POST', url: string, header: string, payload?: object) {
  const res = await t.app.inject({
    method,
    url,
    headers: { ...(header === '' ? {} : { authorization: header }), 'content-type': 'application/json' },
    ...(payload !== undefined ? { payload } : {}),
  });
  return { status: res.statusCode, ...(res.statusCode === 200 ? {} : { code: res.json<{ code: string }>().code }) };
}

export async function graph(header: string, query: string, path: (data: Record<string, unknown>) => unknown) {
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

export type MatrixBundle = ReturnType<typeof abuseBundle>;
export let bundle: MatrixBundle;
/**
 * Starts the matrix app for this test file; `extend` adds what the file's operations need to the
 * bundle (targets it adds go into {@link WORKSPACE}); `env` adds configuration.
 */
export function useMatrixApp(extend?: (bundle: MatrixBundle) => void, env?: Record<string, string>): void {
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
    extend?.(bundle);
    t = await startTestApp({ bundle, ...(env !== undefined ? { env } : {}) });
    const issuer = await loadDevIssuer(t.dataDir);
    expired = await issuer.mint({ sub: 'u-admin', org: 'org-a', ttlSeconds: -3600 });
    clientToken = await issuer.mint({ sub: 'client-ag-1', org: 'org-a', claims: { client_id: 'client-ag-1' } });
  });
  afterAll(async () => {
    await t.close();
  });
}

/** The running app (after the file's beforeAll). */
export function matrixApp(): TestApp {
  return t;
}

/** One `it` per operation and caller (CALLERS and `more`): every target answers as expected. */
export function runMatrix(title: string, operations: Operation[], more: readonly Caller[] = []): void {
  describe(title, () => {
    for (const op of operations) {
      for (const caller of [...CALLERS, ...more]) {
        it(`${op.name} as ${caller.name}`, async () => {
          const header = await caller.header();
          const got: Record<string, string> = {};
          const want: Record<string, string> = {};
          for (const target of op.targets) {
            const answer = await op.call(header, target, caller);
            const expect_ = (op.expects ?? expected)(caller, target);
            got[target] = `${answer.status} ${answer.code ?? ''}`.trim();
            want[target] = `${expect_.status} ${expect_.code ?? ''}`.trim();
          }
          expect(got).toEqual(want);
        });
      }
    }
  });
}
