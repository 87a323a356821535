/**
 * A workspace's insight detection settings over GraphQL answer as over REST, on both registry
 * engines: `Workspace.insightSettings` equals REST's GET, `setInsightSettings` REST's PUT (a write
 * over one transport reads back over the other), and every refusal carries REST's code, status and
 * fields (bad names and values, too many overrides, access); a name given twice is refused, never
 * last-wins. The response cache never answers settings older than a write, and a query of several
 * workspaces reads the overrides once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { DEFAULT_SETTINGS } from '../../src/insights/settings.ts';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { countingStore } from './helpers.ts';
import type { WorkspaceSetting } from '../../src/insights/workspace-settings.ts';

/** A setting as REST answers it. */
type RestSetting = WorkspaceSetting;
interface Problem {
  status: number;
  code: string;
  field?: string;
  detail: string;
  errors?: { field: string; detail: string }[];
}
type Override = { name: string; value: number };

const FIELDS = 'name value overridden default minimum maximum integer oneOf description';
const READ = `query($ws: ID!) { workspace(id: $ws) { id insightSettings { ${FIELDS} } } }`;
const SET = `mutation($input: SetInsightSettingsInput!) { setInsightSettings(input: $input) { workspaceId settings { ${FIELDS} } } }`;

/** REST's setting as GraphQL spells it. */
const asGraphql = ({ one_of, ...s }: RestSetting) => ({ ...s, oneOf: one_of ?? null });
/** REST's `{ name: value }` body as GraphQL's list. */
const asList = (overrides: Record<string, number>): Override[] =>
  Object.entries(overrides).map(([name, value]) => ({ name, value }));
/** The parts of a problem (REST) or of a GraphQL error's extensions both carry. */
const comparable = (p: Problem) => ({
  status: p.status,
  code: p.code,
  ...(p.field !== undefined ? { field: p.field } : {}),
  ...(p.errors !== undefined ? { errors: p.errors } : {}),
});

const engines: [string, () => Record<string, string>][] = [['sqlite', () => ({})]];
const server = await fileDatabase('gw_gql_insight_settings');
if (server !== null) engines.push(['postgres', () => server]);

for (const [engine, env] of engines) {
  describe(`insight settings over GraphQL answer as over REST (${engine})`, () => {
    const counter = countingStore();
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ env: env(), wrapRegistry: (store) => counter.wrap(store) });
    });
    afterAll(async () => t.close());

    const bearer = async (user: string, org = 'org-a') => (await t.auth(user, org)).authorization;
    const apiKey = async () => `Bearer ${TEST_API_KEY}`;
    const clientToken = async () => {
      const issuer = await loadDevIssuer(t.dataDir);
      return `Bearer ${await issuer.mint({ sub: 'client-ag-1', org: 'org-a', claims: { client_id: 'client-ag-1' } })}`;
    };

    async function graph(authorization: string, query: string, variables: Record<string, unknown>) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/graphql',
        headers: { authorization, 'content-type': 'application/json' },
        payload: JSON.stringify({ query, variables }),
      });
      const body = res.json<{
        data?: Record<string, unknown> | null;
        errors?: { message: string; path?: unknown[]; extensions: Record<string, unknown> }[];
      }>();
      return { ...body, status: res.statusCode, cache: res.headers['x-cache'] };
    }
    async function rest(authorization: string, ws: string, overrides?: Record<string, unknown>) {
      const res = await t.app.inject({
        method: overrides === undefined ? 'GET' : 'PUT',
        url: `/skill/v1/workspaces/${ws}/insight-settings`,
        headers: { authorization },
        ...(overrides !== undefined ? { payload: { overrides } } : {}),
      });
      return { status: res.statusCode, body: res.json<unknown>() };
    }
    /** REST's answer of a read, as GraphQL spells its settings. */
    async function restSettings(ws: string, user = 'u-admin') {
      const res = await rest(await bearer(user), ws);
      expect(res.status).toBe(200);
      return (res.body as { settings: RestSetting[] }).settings.map(asGraphql);
    }
    async function graphSettings(ws: string, user = 'u-admin') {
      const res = await graph(await bearer(user), READ, { ws });
      expect(res.errors).toBeUndefined();
      return (res.data?.workspace as { insightSettings: unknown[] }).insightSettings;
    }
    async function set(authorization: string, workspaceId: string, overrides: Override[]) {
      return graph(authorization, SET, { input: { workspaceId, overrides } });
    }
    /** The one error of a refused GraphQL write, in REST's terms; the data is null. */
    function refusal(res: Awaited<ReturnType<typeof graph>>): Problem {
      expect(res.data).toBeNull();
      expect(res.errors).toHaveLength(1);
      const [error] = res.errors ?? [];
      expect(error?.path).toEqual(['setInsightSettings']);
      const { http, ...rest } = error?.extensions as { http: { status: number } } & Record<string, unknown>;
      return { status: http.status, ...rest, detail: error?.message } as Problem;
    }
    async function restRefusal(ws: string, overrides: Record<string, unknown>, user = 'u-admin') {
      const res = await rest(await bearer(user), ws, overrides);
      return { ...(res.body as Problem), status: res.status };
    }
    const stored = async (org = 'org-a') => t.registry.insights.detectionSettings(org);

    it('reads every setting as REST answers it, defaults before any override', async () => {
      for (const [ws, user] of [
        ['ws-a-team', 'u-viewer'],
        ['ws-a-team', 'u-admin'],
        ['ws-a-sub', 'u-admin'],
      ] as const) {
        const settings = await graphSettings(ws, user);
        expect(settings).toEqual(await restSettings(ws, user));
        expect(settings).toHaveLength(Object.keys(DEFAULT_SETTINGS).length);
      }
      const percentile = (await graphSettings('ws-a-team')).find((s) =>
        (s as RestSetting).name.endsWith('.percentile'),
      );
      expect(percentile).toMatchObject({ value: 90, oneOf: [50, 90, 99], overridden: false });
    });

    it('a write over GraphQL reads back over REST, one over REST reads back over GraphQL', async () => {
      const admin = await bearer('u-admin');
      const written = await set(admin, 'ws-a-team', [
        { name: 'latency_regression.factor', value: 2 },
        { name: 'cost_spike.enabled', value: 0 },
      ]);
      expect(written.errors).toBeUndefined();
      const answer = written.data?.setInsightSettings as { workspaceId: string; settings: RestSetting[] };
      expect(answer).toEqual({ workspaceId: 'ws-a-team', settings: await restSettings('ws-a-team', 'u-viewer') });
      expect(answer.settings.find((s) => s.name === 'latency_regression.factor')).toMatchObject({
        value: 2,
        overridden: true,
        default: 1.5,
      });
      expect((await stored())['ws-a-team']).toEqual({ 'latency_regression.factor': 2, 'cost_spike.enabled': 0 });
      // The child keeps its defaults.
      expect((await graphSettings('ws-a-sub')).every((s) => !(s as RestSetting).overridden)).toBe(true);

      // A replacement over REST, read over GraphQL: what it leaves out is back to its default.
      expect((await rest(admin, 'ws-a-team', { cooldown_hours: 48 })).status).toBe(200);
      const after = await graphSettings('ws-a-team', 'u-viewer');
      expect(after).toEqual(await restSettings('ws-a-team'));
      expect(after.filter((s) => (s as RestSetting).overridden)).toEqual([
        expect.objectContaining({ name: 'cooldown_hours', value: 48 }),
      ]);

      // An empty list restores every default, as REST's {}.
      const cleared = await set(admin, 'ws-a-team', []);
      expect((cleared.data?.setInsightSettings as { settings: unknown[] }).settings).toEqual(
        await restSettings('ws-a-team'),
      );
      expect((await stored())['ws-a-team'] ?? {}).toEqual({});
    });

    it('refuses bad names and values, too many or too long, with REST`s codes and fields; nothing changes', async () => {
      const admin = await bearer('u-admin');
      expect((await rest(admin, 'ws-a-team', { cooldown_hours: 12 })).status).toBe(200);
      const bad = {
        'latency_regression.factor': 1,
        'no.such': 3,
        'latency_regression.percentile': 95,
        cooldown_hours: 1.5,
        constructor: 5,
      };
      const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`setting.${i}`, 1]));
      const cases: [string, Record<string, number>, string, string | undefined][] = [
        ['bad names and values', bad, 'validation_failed', undefined],
        ['one value out of range', { 'cost_spike.factor': 1 }, 'invalid_field', '/overrides/cost_spike.factor'],
        ['more overrides than settings', many, 'invalid_field', '/overrides'],
        ['a name of 65 characters', { ['n'.repeat(65)]: 1 }, 'invalid_field', '/overrides'],
      ];
      for (const [name, overrides, code, field] of cases) {
        const viaRest = await restRefusal('ws-a-team', overrides);
        const viaGraph = refusal(await set(admin, 'ws-a-team', asList(overrides)));
        expect([name, comparable(viaGraph)]).toEqual([name, comparable(viaRest)]);
        expect([name, viaGraph.status, viaGraph.code, viaGraph.field, viaGraph.detail]).toEqual([
          name,
          422,
          code,
          field,
          viaRest.detail,
        ]);
      }
      const fields = (p: Problem) => (p.errors ?? []).map((e) => e.field).sort();
      expect(fields(refusal(await set(admin, 'ws-a-team', asList(bad))))).toEqual([
        '/overrides/constructor',
        '/overrides/cooldown_hours',
        '/overrides/latency_regression.factor',
        '/overrides/latency_regression.percentile',
        '/overrides/no.such',
      ]);
      // A value that is not a number never reaches the resolver: GraphQL's own refusal (REST: 422 invalid_field).
      const typed = await graph(admin, SET, {
        input: { workspaceId: 'ws-a-team', overrides: [{ name: 'cooldown_hours', value: 'soon' }] },
      });
      expect([typed.status, typed.errors?.map((e) => e.extensions.code)]).toEqual([400, ['BAD_USER_INPUT']]);
      expect((await stored())['ws-a-team']).toEqual({ cooldown_hours: 12 });
    });

    it('refuses a name given twice, each repeat named, rather than keeping the last', async () => {
      const admin = await bearer('u-admin');
      const once = refusal(
        await set(admin, 'ws-a-team', [
          { name: 'cooldown_hours', value: 24 },
          { name: 'cost_spike.factor', value: 2 },
          { name: 'cooldown_hours', value: 48 },
        ]),
      );
      expect(once).toEqual({
        status: 422,
        code: 'invalid_field',
        field: '/overrides/2/name',
        detail: '/overrides/2/name repeats "cooldown_hours", given at /overrides/0/name',
      });
      const twice = refusal(
        await set(admin, 'ws-a-team', [
          { name: 'cooldown_hours', value: 24 },
          { name: 'cooldown_hours', value: 24 },
          { name: 'cooldown_hours', value: 36 },
        ]),
      );
      expect([twice.code, twice.errors?.map((e) => e.field)]).toEqual([
        'validation_failed',
        ['/overrides/1/name', '/overrides/2/name'],
      ]);
      expect((await stored())['ws-a-team']).toEqual({ cooldown_hours: 12 });
    });

    it('answers access as REST: only admins write, service accounts never, other organizations not found', async () => {
      const cases: [string, () => Promise<string>, string, number, string][] = [
        ['a viewer of the workspace', () => bearer('u-viewer'), 'ws-a-team', 403, 'access_denied'],
        ['a service account by API key', apiKey, 'ws-a-sub', 403, 'access_denied'],
        ['a service account by client token', clientToken, 'ws-a-team', 403, 'access_denied'],
        ['an admin of another organization', () => bearer('u-b', 'org-b'), 'ws-a-team', 404, 'not_found'],
        ['an admin, a workspace of another organization', () => bearer('u-admin'), 'ws-b', 404, 'not_found'],
        ['an admin, an unknown workspace', () => bearer('u-admin'), 'ws-none', 404, 'not_found'],
        ['a viewer, a workspace it cannot read', () => bearer('u-viewer'), 'ws-a-other', 403, 'access_denied'],
      ];
      for (const [name, header, ws, status, code] of cases) {
        const authorization = await header();
        const viaRest = await rest(authorization, ws, { cooldown_hours: 2 });
        const viaGraph = refusal(await set(authorization, ws, [{ name: 'cooldown_hours', value: 2 }]));
        expect([name, viaGraph.status, viaGraph.code]).toEqual([name, status, code]);
        expect([name, viaRest.status, (viaRest.body as Problem).code]).toEqual([name, status, code]);
      }
      // Service accounts and viewers read what they can read; others get the workspace's own refusal.
      expect(await graphSettings('ws-a-sub', 'u-viewer')).toEqual(await restSettings('ws-a-sub', 'u-viewer'));
      const byKey = await graph(await apiKey(), READ, { ws: 'ws-a-sub' });
      expect(byKey.errors).toBeUndefined();
      expect((byKey.data?.workspace as { insightSettings: unknown[] }).insightSettings).toEqual(
        await restSettings('ws-a-sub'),
      );
      const other = await graph(await bearer('u-admin'), READ, { ws: 'ws-b' });
      expect(other.errors?.map((e) => e.extensions.code)).toEqual(['not_found']);
      expect((await rest(await bearer('u-admin'), 'ws-b')).status).toBe(404);
      expect(await stored('org-b')).toEqual({});
      expect((await stored())['ws-a-team']).toEqual({ cooldown_hours: 12 });
    });

    it('the response cache never answers settings older than a write, over either transport', async () => {
      const viewer = await bearer('u-viewer');
      const admin = await bearer('u-admin');
      const cooldown = (res: Awaited<ReturnType<typeof graph>>) =>
        (res.data?.workspace as { insightSettings: RestSetting[] }).insightSettings.find(
          (s) => s.name === 'cooldown_hours',
        )?.value;
      expect(cooldown(await graph(viewer, READ, { ws: 'ws-a-team' }))).toBe(12);
      const kept = await graph(viewer, READ, { ws: 'ws-a-team' });
      expect([kept.cache, cooldown(kept)]).toEqual(['hit', 12]);

      expect((await set(admin, 'ws-a-team', [{ name: 'cooldown_hours', value: 30 }])).errors).toBeUndefined();
      const afterGraph = await graph(viewer, READ, { ws: 'ws-a-team' });
      expect([afterGraph.cache, cooldown(afterGraph)]).toEqual([undefined, 30]);
      expect((await graph(viewer, READ, { ws: 'ws-a-team' })).cache).toBe('hit');

      expect((await rest(admin, 'ws-a-team', { cooldown_hours: 40 })).status).toBe(200);
      const afterRest = await graph(viewer, READ, { ws: 'ws-a-team' });
      expect([afterRest.cache, cooldown(afterRest)]).toEqual([undefined, 40]);
    });

    it('a query of several workspaces reads the organization`s overrides once', async () => {
      const admin = await bearer('u-admin');
      const query = `{ a: workspace(id: "ws-a-team") { insightSettings { name value } }
        b: workspace(id: "ws-a-sub") { insightSettings { name value } }
        viewer { workspaces { id insightSettings { overridden } } } }`;
      counter.reset();
      const res = await graph(admin, `${query} # ${engine}`, {});
      expect(res.errors).toBeUndefined();
      expect(counter.calls()['insights.detectionSettings']).toBe(1);
      const workspaces = (res.data?.viewer as { workspaces: { id: string; insightSettings: unknown[] }[] }).workspaces;
      expect(workspaces.length).toBeGreaterThan(2);
      for (const w of workspaces) expect(w.insightSettings).toHaveLength(Object.keys(DEFAULT_SETTINGS).length);
    });
  });
}
