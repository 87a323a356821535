/**
 * The authorization matrix of telemetry that names a skill: every caller sends one span of each
 * skill into a workspace it may write to. A user's span is stored when the user reads the skill;
 * a service account's also when its agent declares the skill with an active `uses_skill`
 * relationship in its organization (sk-decl, in ws-a-other, which neither account reads); a removed
 * declaration (sk-removed) or one across organizations (sk-b1) grants nothing. Callers with no
 * workspace to write to are refused the whole request (403), failed authentications their own code.
 */
import { expect } from 'vitest';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { otlpSpan } from '../abuse/fixture.ts';
import { END, WORKSPACE, matrixApp, runMatrix, useMatrixApp, type Caller, type Operation } from './matrix.ts';

const SERVICE_ACCOUNTS: Record<string, string> = {
  'service account by client token': 'ag-1',
  'service account by API key': 'ag-2',
};
/** What each agent declares with an active relationship. */
const DECLARES: Record<string, string[]> = { 'ag-1': ['sk-decl'], 'ag-2': ['sk-decl', 'sk-b1'] };
const SKILLS = ['sk-1', 'sk-2', 'sk-b1', 'sk-decl', 'sk-removed'];

useMatrixApp((bundle) => {
  const sk1 = bundle.artifacts.find((a) => a.id === 'sk-1') as Record<string, unknown>;
  for (const [id, name] of [
    ['sk-decl', 'reconcile'],
    ['sk-removed', 'forecast'],
  ] as const) {
    bundle.artifacts.push({
      ...sk1,
      id,
      name,
      display_name: name,
      workspace_id: 'ws-a-other',
      content_hash_hex: id.length.toString(16).padEnd(64, name === 'reconcile' ? 'd' : 'e'),
    } as never);
    WORKSPACE[id] = 'ws-a-other';
  }
  const uses = (from: string, to: string, status: string) => ({
    from: { id: from, kind: 'agent' },
    to: { id: to, kind: 'skill' },
    rel_type: 'uses_skill',
    provenance: 'declared',
    relationship_status: status,
  });
  bundle.relationships.push(
    uses('ag-1', 'sk-decl', 'active'),
    uses('ag-2', 'sk-decl', 'active'),
    uses('ag-2', 'sk-b1', 'active'),
    uses('ag-1', 'sk-removed', 'removed'),
    uses('ag-2', 'sk-removed', 'removed'),
  );
});

/** A workspace the caller may write to, if any. */
function writableOf(caller: Caller): string | undefined {
  return caller.writes?.[0];
}

function expectedSpan(caller: Caller, skill: string): { status: number; code?: string } {
  if (caller.fails !== undefined) return caller.fails;
  if (writableOf(caller) === undefined) return { status: 403, code: 'access_denied' };
  const ws = WORKSPACE[skill] as string;
  const readable = (caller.org ?? new Set()).has(ws) && (caller.reads ?? []).includes(ws);
  const agent = SERVICE_ACCOUNTS[caller.name];
  const declared = agent !== undefined && (caller.org ?? new Set()).has(ws) && DECLARES[agent]?.includes(skill);
  return { status: 200, code: readable || declared === true ? 'stored' : 'rejected' };
}

async function sendSkillSpan(header: string, skill: string, caller: Caller) {
  // Callers with nowhere to write name a workspace they read: the request is refused as a whole.
  const workspace = writableOf(caller) ?? caller.reads?.[0] ?? 'ws-a-team';
  const t = matrixApp();
  const before = await t.traces.countSpans();
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers: { authorization: header, 'content-type': 'application/json' },
    payload: JSON.stringify(
      otlpTraceBody({
        resource: attrs({ 'workspace.id': workspace }),
        spans: [otlpSpan({ 'skill.id': skill }, END - 3600)],
      }),
    ),
  });
  if (res.statusCode !== 200) return { status: res.statusCode, code: res.json<{ code: string }>().code };
  const stored = (await t.traces.countSpans()) - before;
  const answer = res.json<{ partialSuccess?: { rejectedSpans: number; errorMessage: string } }>();
  if (answer.partialSuccess === undefined) {
    expect(stored, 'an accepted span is stored').toBe(1);
    return { status: 200, code: 'stored' };
  }
  expect(answer.partialSuccess).toEqual({
    rejectedSpans: 1,
    errorMessage: `1 span(s): skill "${skill}" does not exist or the sender cannot read it`,
  });
  expect(stored, 'a rejected span is not stored').toBe(0);
  return { status: 200, code: 'rejected' };
}

const OPERATIONS: Operation[] = [
  {
    name: 'OTLP span naming a skill',
    targets: SKILLS,
    call: sendSkillSpan,
    expects: expectedSpan,
  },
];

runMatrix('Authorization matrix: telemetry of declared skills', OPERATIONS);
