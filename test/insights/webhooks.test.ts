/**
 * A workspace's webhook subscriptions over REST and GraphQL, on the real SQLite store: its admins
 * (a role inherited from an ancestor counts) create one and get its secret once, list them without
 * secrets and delete them; everyone else is refused as DESIGN §6 says (404 not discoverable, 403
 * otherwise). The URL, kinds and subjects are checked, subjects against what the creator can read,
 * and a workspace holds a bounded number of subscriptions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SUBSCRIPTIONS_PER_WORKSPACE } from '../../src/insights/webhook-subscriptions.ts';
import { abuseBundle } from '../abuse/fixture.ts';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
import { expectProblem } from '../helpers/problem.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { Webhook } from 'standardwebhooks';
import { loadSigningKey, subscriptionSecret } from '../../src/insights/webhooks/secret.ts';

let t: TestApp;
type Headers = { authorization: string };
let wadmin: Headers;
let orgAdmin: Headers;

/** The workspace admin u-wadmin (ws-a-team) beside the abuse bundle's users. */
function bundle() {
  const b = abuseBundle();
  const t0 = '2026-01-01T00:00:00Z';
  b.users.push({ id: 'u-wadmin', org_id: 'org-a', created_at: t0, updated_at: t0 });
  b.memberships.push({ workspace_id: 'ws-a-team', user_id: 'u-wadmin', role: 'admin' });
  return b;
}

/** A signing key for server mode, where replicas share one (the embedded service makes its own). */
const SIGNING_KEY = { WEBHOOK_SIGNING_KEY: 'k'.repeat(48) };

const hooks = (ws: string) => `/skill/v1/workspaces/${ws}/webhooks`;

async function create(ws: string, headers: Headers, payload: object) {
  return t.app.inject({ method: 'POST', url: hooks(ws), headers, payload });
}
async function list(ws: string, headers: Headers) {
  return t.app.inject({ method: 'GET', url: hooks(ws), headers });
}
async function remove(ws: string, id: string, headers: Headers) {
  return t.app.inject({ method: 'DELETE', url: `${hooks(ws)}/${id}`, headers });
}

type Created = Record<string, unknown> & { id: string; secret: string };

async function graph(query: string, headers: Headers, variables: object = {}) {
  const res = await t.app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } });
  return res.json<{
    data?: Record<string, unknown> | null;
    errors?: { path?: string[]; extensions: { code: string; field?: string } }[];
  }>();
}

const CREATE = `mutation($input: CreateWebhookSubscriptionInput!) {
  createWebhookSubscription(input: $input) { secret subscription { id workspaceId url kinds subjects { type id server } createdBy createdAt } }
}`;

/** The engines: embedded always, PostgreSQL (server mode, with a shared signing key) where a server answers. */
const engines: [string, () => Record<string, string>][] = [['sqlite', () => ({})]];
const server = await fileDatabase('gw_insights_webhooks');
if (server !== null) engines.push(['postgres', () => ({ ...server, ...SIGNING_KEY })]);

for (const [engine, env] of engines) {
  describe(`webhook subscriptions (${engine})`, () => {
    beforeAll(async () => {
      // The tests of the per-workspace cap create more than a minute's quota of one caller.
      t = await startTestApp({ bundle: bundle(), env: { ...env(), WEBHOOK_CREATIONS_PER_MIN: '1000' } });
      wadmin = await t.auth('u-wadmin');
      orgAdmin = await t.auth('u-admin');
    });
    afterAll(async () => {
      await t.close();
    });

    describe('REST', () => {
      it('an admin creates one: 201 with its secret, shown once; the list never shows it; delete removes it', async () => {
        const body = {
          url: 'HTTPS://93.184.215.14:443/insights?team=a',
          kinds: ['cost_spike', 'latency_regression'],
          subjects: [
            { type: 'skill', id: 'sk-1' },
            { type: 'agent', id: 'ag-2' },
            { type: 'tool', id: 'create_issue', server: 'srv-github' },
            { type: 'skill', id: 'sk-1' },
          ],
        };
        const res = await create('ws-a-team', wadmin, body);
        expect(res.statusCode).toBe(201);
        const created = res.json<Created>();
        expect(created).toEqual({
          id: expect.stringMatching(/^whs_[\w-]{16}$/),
          workspace_id: 'ws-a-team',
          url: 'https://93.184.215.14/insights?team=a',
          kinds: ['cost_spike', 'latency_regression'],
          subjects: [
            { type: 'skill', id: 'sk-1' },
            { type: 'agent', id: 'ag-2' },
            { type: 'tool', id: 'create_issue', server: 'srv-github' },
          ],
          created_by: 'u-wadmin',
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          secret: expect.stringMatching(/^whsec_/),
        });
        // The store keeps the salt the secret is derived from, never the secret.
        const [stored] = await t.registry.insights.getSubscriptions('org-a', [created.id]);
        expect(stored?.secret_salt).toBeDefined();
        expect(JSON.stringify(stored)).not.toContain(created.secret);
        const key = (await loadSigningKey(t.config)) ?? '';
        expect(subscriptionSecret(key, stored?.secret_salt ?? '')).toBe(created.secret);
        // A receiver verifies with it what the service signs with it (Standard Webhooks).
        const signed = new Webhook(subscriptionSecret(key, stored?.secret_salt ?? ''));
        const at = new Date();
        const headers = {
          'webhook-id': 'msg_1',
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signed.sign('msg_1', at, '{"a":1}'),
        };
        expect(new Webhook(created.secret).verify('{"a":1}', headers)).toEqual({ a: 1 });

        const listed = await list('ws-a-team', wadmin);
        expect(listed.statusCode).toBe(200);
        const { secret: _secret, ...shown } = created;
        expect(listed.json()).toEqual({ items: [shown] });
        expect(listed.body).not.toContain(created.secret);

        expectProblem(await remove('ws-a', created.id, orgAdmin), 404, 'not_found');
        const deleted = await remove('ws-a-team', created.id, wadmin);
        expect([deleted.statusCode, deleted.body]).toEqual([204, '']);
        expectProblem(await remove('ws-a-team', created.id, wadmin), 404, 'not_found');
        expect((await list('ws-a-team', wadmin)).json()).toEqual({ items: [] });
      });

      it('only admins: viewers, editors, service accounts and other workspaces’ admins are refused', async () => {
        const ok = { url: 'https://93.184.215.14/x' };
        const mine = (await create('ws-a-team', wadmin, ok)).json<Created>();
        const cases: [Headers, string, number, string][] = [
          [await t.auth('u-viewer'), 'ws-a-team', 403, 'access_denied'],
          [await t.auth('u-editor'), 'ws-a-sub', 403, 'access_denied'],
          [{ authorization: `Bearer ${TEST_API_KEY}` }, 'ws-a-sub', 403, 'access_denied'],
          [await t.auth('u-none'), 'ws-a-team', 403, 'access_denied'],
          [wadmin, 'ws-a-other', 403, 'access_denied'],
          [wadmin, 'ws-a', 403, 'access_denied'],
          [wadmin, 'ws-b', 404, 'not_found'],
          [wadmin, 'ws-nowhere', 404, 'not_found'],
          [await t.auth('u-b', 'org-b'), 'ws-a-team', 404, 'not_found'],
        ];
        for (const [headers, ws, status, code] of cases) {
          expectProblem(await create(ws, headers, ok), status, code as 'not_found');
          expectProblem(await list(ws, headers), status, code as 'not_found');
          expectProblem(await remove(ws, mine.id, headers), status, code as 'not_found');
        }
        // An admin of an ancestor is an admin of the subtree.
        const inherited = await create('ws-a-sub', orgAdmin, ok);
        expect(inherited.statusCode).toBe(201);
        expect((await list('ws-a-team', wadmin)).json<{ items: { id: string }[] }>().items.map((s) => s.id)).toEqual([
          mine.id,
        ]);
        expect((await remove('ws-a-team', mine.id, wadmin)).statusCode).toBe(204);
        expect((await remove('ws-a-sub', inherited.json<Created>().id, wadmin)).statusCode).toBe(204);
      });

      it('checks the URL, kinds and subjects: one bad field invalid_field, several validation_failed', async () => {
        const field = async (payload: object, pointer: string) => {
          const problem = expectProblem(await create('ws-a-team', wadmin, payload), 422, 'invalid_field');
          expect(problem.field).toBe(pointer);
        };
        await field({}, '/url');
        await field({ url: 'ftp://hooks.example.com/x' }, '/url');
        await field({ url: 'https://user:secret@hooks.example.com/x' }, '/url');
        await field({ url: `https://93.184.215.14/${'a'.repeat(2048)}` }, '/url');
        await field({ url: 'https://[::1' }, '/url');
        await field({ url: 'https://93.184.215.14/x', kinds: ['nope'] }, '/kinds/0');
        await field({ url: 'https://93.184.215.14/x', kinds: ['cost_spike', 'cost_spike'] }, '/kinds');
        await field({ url: 'https://93.184.215.14/x', secret: 'mine' }, '/secret');
        // The creator reads ws-a-team and ws-a-sub: ag-3 (ws-a-other) and sk-b1 (org-b) are not theirs to name.
        await field({ url: 'https://93.184.215.14/x', subjects: [{ type: 'agent', id: 'ag-3' }] }, '/subjects/0/id');
        await field({ url: 'https://93.184.215.14/x', subjects: [{ type: 'skill', id: 'sk-b1' }] }, '/subjects/0/id');
        await field({ url: 'https://93.184.215.14/x', subjects: [{ type: 'skill', id: 'ag-1' }] }, '/subjects/0/id');
        await field(
          { url: 'https://93.184.215.14/x', subjects: [{ type: 'skill', id: 'sk-1', server: 'srv' }] },
          '/subjects/0/server',
        );
        const many = Array.from({ length: 51 }, (_, i) => ({ type: 'tool', id: `tool-${i}` }));
        await field({ url: 'https://93.184.215.14/x', subjects: many }, '/subjects');
        const several = expectProblem(
          await create('ws-a-team', wadmin, {
            url: 'https://user@hooks.example.com/x',
            subjects: [
              { type: 'skill', id: 'sk-2' },
              { type: 'agent', id: 'ag-3' },
            ],
          }),
          422,
          'validation_failed',
        );
        expect(several.errors.map((e: { field: string }) => e.field)).toEqual(['/url', '/subjects/1/id']);
        expect((await list('ws-a-team', wadmin)).json()).toEqual({ items: [] });
      });

      it('refuses targets deliveries may not reach: private, loopback and link-local addresses, unresolvable hosts', async () => {
        const targets: [string, string][] = [
          ['http://127.0.0.1:8080/hook', 'a loopback address'],
          ['https://10.1.2.3/hook', 'a private address'],
          ['https://[::1]/hook', 'a loopback address'],
          ['https://[::ffff:192.168.1.9]/hook', 'a private address'],
          ['http://169.254.169.254/latest/meta-data', 'a link-local address'],
          ['https://no-such-host.invalid/hook', 'does not resolve, or resolves to an address webhooks may not reach'],
        ];
        for (const [url, reason] of targets) {
          const problem = expectProblem(await create('ws-a-team', wadmin, { url }), 422, 'invalid_field');
          expect([url, problem.field, problem.detail]).toEqual([url, '/url', expect.stringContaining(reason)]);
        }
        expect((await list('ws-a-team', wadmin)).json()).toEqual({ items: [] });
      });

      it('a target named by WEBHOOK_ALLOWED_TARGETS is allowed although private', async () => {
        const allowed = await startTestApp({ env: { WEBHOOK_ALLOWED_TARGETS: '127.0.0.1,10.9.0.0/16' } });
        try {
          const headers = await allowed.auth('u-admin');
          for (const url of ['http://127.0.0.1:9/hook', 'https://10.9.8.7/hook']) {
            const res = await allowed.app.inject({ method: 'POST', url: hooks('ws-a'), headers, payload: { url } });
            expect([url, res.statusCode]).toEqual([url, 201]);
          }
          const refused = await allowed.app.inject({
            method: 'POST',
            url: hooks('ws-a'),
            headers,
            payload: { url: 'https://10.10.0.1/hook' },
          });
          expectProblem(refused, 422, 'invalid_field');
        } finally {
          await allowed.close();
        }
      });

      it(`a workspace holds at most ${MAX_SUBSCRIPTIONS_PER_WORKSPACE} subscriptions`, async () => {
        const made: Created[] = [];
        for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_WORKSPACE; i++) {
          const res = await create('ws-a-sub', wadmin, { url: `https://93.184.215.14/${i}` });
          expect(res.statusCode).toBe(201);
          made.push(res.json<Created>());
        }
        const over = expectProblem(
          await create('ws-a-sub', wadmin, { url: 'https://93.184.215.14/x' }),
          422,
          'validation_failed',
        );
        expect(over.detail).toContain(`holds ${MAX_SUBSCRIPTIONS_PER_WORKSPACE} webhook subscriptions`);
        // Another workspace has its own room.
        expect((await create('ws-a-team', wadmin, { url: 'https://93.184.215.14/x' })).statusCode).toBe(201);
        // Oldest first; those created within one millisecond by id.
        const oldestFirst = made
          .map((m): [string, string] => [String(m.created_at), m.id])
          .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
          .map(([, id]) => id);
        const listed = (await list('ws-a-sub', wadmin)).json<{ items: { id: string }[] }>();
        expect(listed.items.map((s) => s.id)).toEqual(oldestFirst);
      });

      it('creations at once never pass the cap: exactly the cap stored, the others refused as over it', async () => {
        const answers = await Promise.all(
          Array.from({ length: MAX_SUBSCRIPTIONS_PER_WORKSPACE + 10 }, (_, i) =>
            create('ws-a-other', orgAdmin, { url: `https://93.184.215.15/${i}` }),
          ),
        );
        const codes = answers.map((a) => a.statusCode);
        expect(codes.filter((c) => c === 201)).toHaveLength(MAX_SUBSCRIPTIONS_PER_WORKSPACE);
        for (const over of answers.filter((a) => a.statusCode !== 201))
          expect(expectProblem(over, 422, 'validation_failed').detail).toContain(
            `holds ${MAX_SUBSCRIPTIONS_PER_WORKSPACE} webhook subscriptions`,
          );
        const listed = (await list('ws-a-other', orgAdmin)).json<{ items: unknown[] }>();
        expect(listed.items).toHaveLength(MAX_SUBSCRIPTIONS_PER_WORKSPACE);
      });
    });

    describe('GraphQL', () => {
      it('the mutations and Workspace.webhookSubscriptions answer as REST, with the same rules', async () => {
        const input = {
          workspaceId: 'ws-a-team',
          url: 'https://93.184.215.14/graph',
          kinds: ['COST_SPIKE'],
          subjects: [{ type: 'SKILL', id: 'sk-1' }],
        };
        const made = await graph(CREATE, wadmin, { input });
        const created = (made.data?.createWebhookSubscription as { secret: string; subscription: { id: string } })
          .subscription;
        expect((made.data?.createWebhookSubscription as { secret: string }).secret).toMatch(/^whsec_/);
        const rest = (await list('ws-a-team', wadmin)).json<{ items: Record<string, unknown>[] }>().items;
        const restItem = rest.find((s) => s.id === created.id);
        expect(created).toEqual({
          id: restItem?.id,
          workspaceId: 'ws-a-team',
          url: restItem?.url,
          kinds: ['COST_SPIKE'],
          subjects: [{ type: 'SKILL', id: 'sk-1', server: null }],
          createdBy: 'u-wadmin',
          createdAt: restItem?.created_at,
        });

        const shown = await graph('{ workspace(id: "ws-a-team") { id webhookSubscriptions { id url } } }', wadmin);
        expect(shown.data?.workspace).toMatchObject({
          webhookSubscriptions: rest.map((s) => ({ id: s.id, url: s.url })),
        });
        // A viewer reads the workspace, not its subscriptions.
        const viewer = await t.auth('u-viewer');
        const hidden = await graph('{ workspace(id: "ws-a-team") { id webhookSubscriptions { id } } }', viewer);
        expect(hidden.data?.workspace).toEqual({ id: 'ws-a-team', webhookSubscriptions: null });
        expect(hidden.errors?.map((e) => [e.path, e.extensions.code])).toEqual([
          [['workspace', 'webhookSubscriptions'], 'access_denied'],
        ]);
        const refused = await graph(CREATE, viewer, { input });
        expect(refused.errors?.[0]?.extensions.code).toBe('access_denied');
        const bad = await graph(CREATE, wadmin, { input: { ...input, url: 'ftp://x' } });
        expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_field', field: '/url' });

        const del = `mutation($ws: ID!, $id: ID!) { deleteWebhookSubscription(workspaceId: $ws, id: $id) }`;
        expect((await graph(del, viewer, { ws: 'ws-a-team', id: created.id })).errors?.[0]?.extensions.code).toBe(
          'access_denied',
        );
        expect((await graph(del, wadmin, { ws: 'ws-a-team', id: created.id })).data).toEqual({
          deleteWebhookSubscription: true,
        });
        expect((await graph(del, wadmin, { ws: 'ws-a-team', id: created.id })).errors?.[0]?.extensions.code).toBe(
          'not_found',
        );
      });
    });
  });
}

if (server !== null)
  describe('server mode without a signing key', () => {
    it('creates no subscription (503 service_unavailable): its secret could not be derived by every replica', async () => {
      const app = await startTestApp({ bundle: bundle(), env: server });
      try {
        const headers = await app.auth('u-wadmin');
        const held = async () => (await app.app.inject({ method: 'GET', url: hooks('ws-a-team'), headers })).json();
        const before = await held();
        const res = await app.app.inject({
          method: 'POST',
          url: hooks('ws-a-team'),
          headers,
          payload: { url: 'https://93.184.215.14/x' },
        });
        expectProblem(res, 503, 'service_unavailable');
        expect(await held()).toEqual(before);
      } finally {
        await app.close();
      }
    });
  });
