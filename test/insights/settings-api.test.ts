/**
 * A workspace's insight detection settings over REST, on the real registry store: readers see every
 * setting with its default, range and the value detection uses; only the workspace's admins replace
 * its overrides, checked whole (an unknown name or a value out of range refuses the write, each
 * named, and changes nothing); `{}` restores the defaults. Both engines where a server answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src/insights/settings.ts';
import { expectProblem } from '../helpers/problem.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const path = (ws: string) => `/skill/v1/workspaces/${ws}/insight-settings`;
type Setting = { name: string; value: number; overridden: boolean; default: number; minimum: number; maximum: number };
type Answer = { workspace_id: string; settings: Setting[] };

const engines: [string, () => Record<string, string>][] = [['sqlite', () => ({})]];
const server = await fileDatabase('gw_insight_settings');
if (server !== null) engines.push(['postgres', () => server]);

for (const [engine, env] of engines) {
  describe(`insight settings over REST (${engine})`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ env: env() });
    });
    afterAll(async () => t.close());

    const get = async (ws: string, user: string) =>
      t.app.inject({ method: 'GET', url: path(ws), headers: await t.auth(user) });
    const put = async (ws: string, user: string, payload: object) =>
      t.app.inject({ method: 'PUT', url: path(ws), headers: await t.auth(user), payload });
    const byName = (a: Answer) => Object.fromEntries(a.settings.map((s) => [s.name, s]));

    it('a reader sees every setting at its default before any override', async () => {
      const res = await get('ws-a-team', 'u-viewer');
      expect(res.statusCode).toBe(200);
      const answer = res.json<Answer>();
      expect(answer.workspace_id).toBe('ws-a-team');
      expect(Object.fromEntries(answer.settings.map((s) => [s.name, s.value]))).toEqual(DEFAULT_SETTINGS);
      expect(answer.settings.every((s) => !s.overridden && s.minimum <= s.value && s.value <= s.maximum)).toBe(true);
    });

    it('an admin replaces the overrides; readers see them, the store keeps them, children keep defaults', async () => {
      const res = await put('ws-a-team', 'u-admin', {
        overrides: { 'latency_regression.factor': 2, 'cost_spike.enabled': 0 },
      });
      expect(res.statusCode).toBe(200);
      const settings = byName(res.json<Answer>());
      expect(settings['latency_regression.factor']).toMatchObject({ value: 2, overridden: true, default: 1.5 });
      expect(settings['cost_spike.enabled']).toMatchObject({ value: 0, overridden: true });
      expect(settings['cost_spike.factor']).toMatchObject({
        value: DEFAULT_SETTINGS['cost_spike.factor'],
        overridden: false,
      });
      expect((await t.registry.insights.detectionSettings('org-a'))['ws-a-team']).toEqual({
        'latency_regression.factor': 2,
        'cost_spike.enabled': 0,
      });
      expect(byName((await get('ws-a-team', 'u-viewer')).json<Answer>())['latency_regression.factor']?.value).toBe(2);
      expect(byName((await get('ws-a-sub', 'u-admin')).json<Answer>())['latency_regression.factor']?.value).toBe(1.5);
      // A replacement, not a merge: what it leaves out goes back to its default.
      const again = byName((await put('ws-a-team', 'u-admin', { overrides: { cooldown_hours: 48 } })).json<Answer>());
      expect(again['latency_regression.factor']).toMatchObject({ value: 1.5, overridden: false });
      expect(again.cooldown_hours).toMatchObject({ value: 48, overridden: true });
      expect((await put('ws-a-team', 'u-admin', { overrides: {} })).statusCode).toBe(200);
      expect((await t.registry.insights.detectionSettings('org-a'))['ws-a-team'] ?? {}).toEqual({});
    });

    it('refuses unknown names and values out of range, each named, and changes nothing', async () => {
      await put('ws-a-team', 'u-admin', { overrides: { cooldown_hours: 12 } });
      const res = await put('ws-a-team', 'u-admin', {
        overrides: {
          'latency_regression.factor': 1,
          'no.such': 3,
          'latency_regression.percentile': 95,
          cooldown_hours: 1.5,
        },
      });
      const problem = expectProblem(res, 422, 'validation_failed');
      expect((problem.errors as { field: string }[]).map((e) => e.field).sort()).toEqual([
        '/overrides/cooldown_hours',
        '/overrides/latency_regression.factor',
        '/overrides/latency_regression.percentile',
        '/overrides/no.such',
      ]);
      // Names an object inherits are not settings either.
      const inherited = await put('ws-a-team', 'u-admin', { overrides: { constructor: 5, toString: 1 } });
      const fields = (expectProblem(inherited, 422, 'validation_failed').errors as { field: string }[]).map(
        (e) => e.field,
      );
      expect(fields.sort()).toEqual(['/overrides/constructor', '/overrides/toString']);
      expectProblem(await put('ws-a-team', 'u-admin', { overrides: { cooldown_hours: 'soon' } }), 422, 'invalid_field');
      expect((await t.registry.insights.detectionSettings('org-a'))['ws-a-team']).toEqual({ cooldown_hours: 12 });
    });

    it('only admins write; non-readers get 404, readers without the role 403', async () => {
      expectProblem(await put('ws-a-team', 'u-viewer', { overrides: {} }), 403, 'access_denied');
      expectProblem(await get('ws-a-other', 'u-viewer'), 403, 'access_denied');
      expectProblem(await get('ws-b', 'u-admin'), 404, 'not_found');
      expectProblem(await put('ws-b', 'u-admin', { overrides: {} }), 404, 'not_found');
      expect(await t.registry.insights.detectionSettings('org-b')).toEqual({});
    });
  });
}
