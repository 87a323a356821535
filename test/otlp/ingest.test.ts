/**
 * What OTLP ingestion (src/otlp/ingest.ts) does with the spans it is sent, as the sender and the
 * statistics see it: the workspace a span without `workspace.id` lands in, the 403 before the body
 * is read, the skills a span may name, and the partial-success message, exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { otlpSpan } from '../abuse/fixture.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const TEAM_KEY = 'agk_teamkey000000000000000000000000000';
const T0 = '2026-01-01T00:00:00Z';
/** Each test sends its spans in its own hour, so the statistics of one do not count another's. */
const HOUR = 3600;
const BASE = Date.UTC(2026, 5, 1) / 1000;
let hour = 0;
const nextHour = () => BASE + hour++ * HOUR;

/**
 * The small bundle plus: u-home, who reads the whole org (viewer on ws-a), writes ws-a-other
 * (editor) and owns the personal workspace ws-u-home (user_default, outside ws-a, so no one else
 * writes it), which sorts after ws-a-other;
 * u-sub, an editor of ws-a-sub only (it cannot read sk-1 in ws-a-team) whose personal workspace
 * ws-a-zz-away sits under the root (u-admin may write it); ag-4, an agent of
 * ws-a-team (whose subtree ws-a-sub sorts first) with an API key; and skills n000…n099 in ws-a-team.
 */
function bundle() {
  const b = smallBundle();
  b.users.push(
    { id: 'u-home', org_id: 'org-a', name: 'Hal Home', created_at: T0, updated_at: T0 },
    { id: 'u-sub', org_id: 'org-a', name: 'Sue Sub', created_at: T0, updated_at: T0 },
  );
  const { parent_id: _root, ...ws } = b.workspaces.find((w) => w.id === 'ws-a-other') as Record<string, unknown>;
  b.workspaces.push({
    ...ws,
    id: 'ws-u-home',
    name: 'home-u-home',
    display_name: 'Hal (personal)',
    kind: 'user_default',
  } as never);
  // Another user's personal workspace under the root: u-admin may write it, but it is not theirs.
  b.workspaces.push({ ...ws, id: 'ws-a-zz-away', parent_id: 'ws-a', name: 'home-away', kind: 'user_default' } as never);
  b.memberships.push(
    { workspace_id: 'ws-a-zz-away', user_id: 'u-sub', role: 'admin' },
    { workspace_id: 'ws-a', user_id: 'u-home', role: 'viewer' },
    { workspace_id: 'ws-a-other', user_id: 'u-home', role: 'editor' },
    { workspace_id: 'ws-u-home', user_id: 'u-home', role: 'admin' },
    { workspace_id: 'ws-a-sub', user_id: 'u-sub', role: 'editor' },
  );
  const ag2 = b.artifacts.find((a) => a.id === 'ag-2') as Record<string, unknown>;
  b.artifacts.push({
    ...ag2,
    id: 'ag-4',
    name: 'Team Bot',
    display_name: 'Team Bot',
    workspace_id: 'ws-a-team',
    content_hash_hex: 'a4'.padEnd(64, '0'),
    identity: {
      client_id: 'client-ag-4',
      credential_kind: 'api_key',
      api_key: TEAM_KEY,
      expires_at: '2099-01-01T00:00:00Z',
    },
  } as never);
  const sk1 = b.artifacts.find((a) => a.id === 'sk-1') as Record<string, unknown>;
  for (let i = 0; i < 100; i++) {
    const n = `n${String(i).padStart(3, '0')}`;
    b.artifacts.push({
      ...sk1,
      id: `sk-${n}`,
      name: n,
      display_name: n,
      content_hash_hex: `5${String(i).padStart(3, '0')}`.padEnd(64, '0'),
    } as never);
  }
  return b;
}

/** Counts the registry's artifact lookups by id (each call's ids). */
const lookups: string[][] = [];
function counting(store: RegistryStore): RegistryStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop !== 'getArtifacts') return value.bind(target);
      return (ids: string[]) => {
        lookups.push([...ids]);
        return (value as (ids: string[]) => unknown).call(target, ids);
      };
    },
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ bundle: bundle(), wrapRegistry: counting });
});
afterAll(async () => {
  await t.close();
});

type Resource = Record<string, string>;
/** An OTLP/JSON body of several resources, each with its spans. */
const body = (...groups: [Resource, object[]][]) =>
  JSON.stringify(otlpTraceBody(...groups.map(([resource, spans]) => ({ resource: attrs(resource), spans }))));

async function send(payload: string, auth: Record<string, string>) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers: { ...auth, 'content-type': 'application/json' },
    payload,
  });
}
/** The partial success of a 200 answer ({} when every span was stored). */
async function sent(payload: string, auth: Record<string, string>) {
  const res = await send(payload, auth);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ partialSuccess?: { rejectedSpans: number | string; errorMessage: string } }>();
}
const rejection = (rejectedSpans: number, errorMessage: string) => ({
  partialSuccess: { rejectedSpans, errorMessage },
});
const admin = () => t.auth('u-admin');

/** Traces of sk-1 that the statistics count in one workspace during the hour at `startS`. */
async function tracesIn(workspace: string, startS: number, user = 'u-admin'): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    headers: await t.auth(user),
    payload: {
      start_time_unix_seconds: startS,
      end_time_unix_seconds: startS + HOUR,
      request_type: 'scalar',
      workspace_id: workspace,
      queries: [{ name: 't', measure: 'traces' }],
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.results[0].value;
}

describe('the workspace of a span without workspace.id', () => {
  it("is a user's personal workspace, even when another writable one sorts first", async () => {
    const at = nextHour();
    expect(await sent(body([{}, [otlpSpan({ 'skill.id': 'sk-1' }, at)]]), await t.auth('u-home'))).toEqual({});
    expect(await tracesIn('ws-u-home', at, 'u-home')).toBe(1);
    expect(await tracesIn('ws-a-other', at, 'u-home')).toBe(0);
  });

  it("is a user's first writable workspace when they have no personal one", async () => {
    const at = nextHour();
    // u-admin writes ws-a and its subtree: ws-a sorts first.
    expect(await sent(body([{}, [otlpSpan({ 'skill.id': 'sk-1' }, at)]]), await admin())).toEqual({});
    expect(await tracesIn('ws-a', at)).toBe(1);
    expect(await tracesIn('ws-a-team', at)).toBe(0);
    // Not u-sub's personal workspace, which u-admin (admin of the root) can also write.
    expect(await tracesIn('ws-a-zz-away', at)).toBe(0);
    // u-sub writes ws-a-sub only, and cannot read sk-1 there.
    expect(await sent(body([{}, [otlpSpan({ 'skill.id': 'sk-1' }, at)]]), await t.auth('u-sub'))).toEqual(
      rejection(1, '1 span(s): skill "sk-1" does not exist or the sender cannot read it'),
    );
  });

  it("is a service account's own workspace, not the first of its subtree", async () => {
    const at = nextHour();
    const key = { authorization: `Bearer ${TEAM_KEY}` };
    expect(await sent(body([{}, [otlpSpan({ 'skill.id': 'sk-1' }, at)]]), key)).toEqual({});
    expect(await tracesIn('ws-a-team', at)).toBe(1);
    expect(await tracesIn('ws-a-sub', at)).toBe(0);
    // It may write its subtree when it says so.
    expect(await sent(body([{ 'workspace.id': 'ws-a-sub' }, [otlpSpan({ 'skill.id': 'sk-1' }, at)]]), key)).toEqual({});
    expect(await tracesIn('ws-a-sub', at)).toBe(1);
  });
});

describe('a caller who may write nowhere', () => {
  it('gets 403 before the body is read: even a malformed body is not looked at', async () => {
    for (const user of ['u-none', 'u-viewer']) {
      for (const payload of [body([{}, [otlpSpan({ 'skill.id': 'sk-1' })]]), '{not json']) {
        const problem = expectProblem(await send(payload, await t.auth(user)), 403, 'access_denied');
        expect(problem.detail).toBe('the caller may not create content in any workspace');
      }
    }
    // The same malformed body from a caller who may write is a payload problem.
    expect((await send('{not json', await admin())).statusCode).toBe(400);
  });
});

describe('the skills spans name', () => {
  it('counts a span for a skill only when the id is a skill the sender can read', async () => {
    const at = nextHour();
    const named = (attrs: Record<string, string>) => otlpSpan(attrs, at);
    const res = await sent(
      body([
        {},
        [
          named({ 'skill.id': 'sk-1' }),
          named({ 'skill.id': 'ag-1' }),
          named({ 'skill.id': 'ag-1' }),
          named({ 'skill.id': 'sk-b1' }),
          named({ 'skill.id': 'sk-nope' }),
          named({ 'skill.name': 'summarize' }),
          named({ 'skill.name': 'no-such-skill' }),
        ],
      ]),
      await admin(),
    );
    expect(res).toEqual(
      rejection(
        5,
        [
          '2 span(s): skill "ag-1" does not exist or the sender cannot read it',
          '1 span(s): skill "sk-b1" does not exist or the sender cannot read it',
          '1 span(s): skill "sk-nope" does not exist or the sender cannot read it',
          '1 span(s): skill named "no-such-skill" does not exist or the sender cannot read it',
        ].join('; '),
      ),
    );
    expect(await tracesIn('ws-a', at)).toBe(2);
  });

  it('resolves at most 100 distinct skill names per request', async () => {
    const at = nextHour();
    const names = Array.from({ length: 101 }, (_, i) => `n${String(i).padStart(3, '0')}`);
    const spans = [...names, 'n000', 'n099', 'n100'].map((name) => otlpSpan({ 'skill.name': name }, at));
    expect(await sent(body([{}, spans]), await admin())).toEqual(
      rejection(2, '2 span(s): more than 100 distinct skill names in one request'),
    );
  });

  it('looks skills up by id once per request, and not at all when no span names one by id', async () => {
    const at = nextHour();
    lookups.length = 0;
    const ids = ['sk-1', 'ag-1', 'sk-1', 'sk-nope', 'ag-1'];
    await sent(body([{}, ids.map((id) => otlpSpan({ 'skill.id': id }, at))]), await admin());
    expect(lookups).toEqual([['sk-1', 'ag-1', 'sk-nope']]);
    lookups.length = 0;
    expect(
      await sent(body([{}, [otlpSpan({ 'skill.name': 'summarize' }, at), otlpSpan({}, at)]]), await admin()),
    ).toEqual({});
    expect(lookups).toEqual([]);
  });
});

describe('the partial-success message', () => {
  it('quotes values, cut after 64 characters', async () => {
    const at = nextHour();
    const w64 = 'w'.repeat(64);
    const w65 = `${'x'.repeat(64)}y`;
    const id = `${'s'.repeat(64)}tail`;
    const res = await sent(
      body(
        [{ 'workspace.id': w64 }, [otlpSpan({}, at)]],
        [{ 'workspace.id': w65 }, [otlpSpan({}, at), otlpSpan({}, at)]],
        [{}, [otlpSpan({ 'skill.id': id }, at), otlpSpan({ 'skill.name': 'm'.repeat(65) }, at)]],
      ),
      await admin(),
    );
    expect(res).toEqual(
      rejection(
        5,
        [
          `1 span(s): no permission to write to workspace "${w64}"`,
          `2 span(s): no permission to write to workspace "${'x'.repeat(64)}…"`,
          `1 span(s): skill "${'s'.repeat(64)}…" does not exist or the sender cannot read it`,
          `1 span(s): skill named "${'m'.repeat(64)}…" does not exist or the sender cannot read it`,
        ].join('; '),
      ),
    );
  });

  it('lists 20 reasons with their counts, in order of first sight, and counts the others together', async () => {
    const at = nextHour();
    const id = (i: number) => `nope-${String(i).padStart(2, '0')}`;
    // nope-00 three times (once after the list is full), nope-01…nope-19 once, nope-20 and nope-21 beyond the 20.
    const order = [0, 0, ...Array.from({ length: 21 }, (_, i) => i + 1), 0, 20];
    const res = await sent(body([{}, order.map((i) => otlpSpan({ 'skill.id': id(i) }, at))]), await admin());
    const reason = (i: number) => `skill "${id(i)}" does not exist or the sender cannot read it`;
    expect(res).toEqual(
      rejection(
        order.length,
        [
          `3 span(s): ${reason(0)}`,
          ...Array.from({ length: 19 }, (_, i) => `1 span(s): ${reason(i + 1)}`),
          '3 span(s): other reasons',
        ].join('; '),
      ),
    );
  });

  it('with exactly 20 reasons, lists them all and nothing else', async () => {
    const at = nextHour();
    const spans = Array.from({ length: 20 }, (_, i) => otlpSpan({ 'skill.id': `gone-${i}` }, at));
    const res = await sent(body([{}, spans]), await admin());
    expect(res).toEqual(
      rejection(
        20,
        Array.from(
          { length: 20 },
          (_, i) => `1 span(s): skill "gone-${i}" does not exist or the sender cannot read it`,
        ).join('; '),
      ),
    );
  });
});
