/**
 * METRICS_TOKEN: when set, `GET /metrics` answers only `Authorization: Bearer <token>`; no or another
 * credential gets 401 problem+json (`token_missing`, `token_rejected`) without a byte of the metrics;
 * unset, it answers every scrape as before. A token that is short or not sendable stops start-up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const TOKEN = 'scrape-0123456789abcdef';
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const scrape = (app: TestApp, authorization?: string) =>
  app.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });

describe('METRICS_TOKEN', () => {
  it('guards /metrics with the bearer token', async () => {
    t = await startTestApp({ env: { METRICS_TOKEN: TOKEN } });
    for (const [authorization, code] of [
      [undefined, 'token_missing'],
      ['', 'token_missing'],
      [`Basic ${TOKEN}`, 'token_missing'],
      [`Bearer ${TOKEN}x`, 'token_rejected'],
      [`Bearer ${TOKEN.slice(0, -1)}`, 'token_rejected'],
      [`Bearer ${await t.token('u-admin')}`, 'token_rejected'],
    ] as const) {
      const res = await scrape(t, authorization);
      expectProblem(res, 401, code);
      expect(res.body).not.toContain('gateway_');
    }
    for (const authorization of [`Bearer ${TOKEN}`, `bearer  ${TOKEN}`]) {
      const ok = await scrape(t, authorization);
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('# TYPE gateway_http_requests_total counter');
      // The refused scrapes are counted like any other request.
      expect(ok.body).toContain('gateway_http_requests_total{method="GET",route="/metrics",status="401"} 6');
    }
  });

  it('leaves /metrics open when unset', async () => {
    t = await startTestApp();
    expect((await scrape(t)).statusCode).toBe(200);
    expect((await scrape(t, 'Bearer anything')).statusCode).toBe(200);
  });

  it('is 16 to 4096 printable characters without spaces', () => {
    expect(loadConfig({ METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
    expect(loadConfig({}).metricsToken).toBeUndefined();
    for (const bad of ['short', 'with a space in it ok', `${'x'.repeat(16)}\u00e9`])
      expect(() => loadConfig({ METRICS_TOKEN: bad })).toThrow(ConfigError);
  });
});
