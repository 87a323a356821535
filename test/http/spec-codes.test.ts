/**
 * Error statuses pinned to the specification, not to the project's own catalogue: the table below
 * is a copy of the specification's error table (gateway-http-api.md, "Error codes"). The catalogue
 * must agree with it code for code, and real answers of the app carry the status the table gives
 * their code (changing a status in src/errors.ts fails here).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { catalogue } from '../../src/errors.ts';
import { DESIGN_ONLY, MCP_REGISTRY_ONLY, SPEC_STATUS } from '../helpers/spec-errors.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

function expectSpecProblem(res: { statusCode: number; json: () => unknown }, code: string): void {
  const body = res.json() as { code: string; status: number };
  expect(body.code).toBe(code);
  expect(res.statusCode, `${code} answers the specification's status`).toBe(SPEC_STATUS.get(code));
  expect(body.status).toBe(SPEC_STATUS.get(code));
}

describe('error statuses of the specification', () => {
  it('the catalogue has every code of the table, with its status, and no other code beyond DESIGN and MCP Registry ones', () => {
    const byCode: Record<string, { status: number } | undefined> = catalogue;
    for (const [code, status] of SPEC_STATUS) expect(byCode[code]?.status, code).toBe(status);
    for (const [code, status] of MCP_REGISTRY_ONLY) expect(byCode[code]?.status, code).toBe(status);
    for (const code of Object.keys(catalogue))
      expect(SPEC_STATUS.has(code) || DESIGN_ONLY.has(code) || MCP_REGISTRY_ONLY.has(code), code).toBe(true);
  });

  it('real answers carry the status of their code', async () => {
    const admin = await t.auth('u-admin');
    const json = { ...admin, 'content-type': 'application/json' };
    const issuer = await loadDevIssuer(t.dataDir);
    const expired = await issuer.mint({ sub: 'u-admin', org: 'org-a', ttlSeconds: -3600 });
    const inject = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: string) =>
      t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });

    expectSpecProblem(await inject('GET', '/mcp/v1/tools', {}), 'token_missing');
    expectSpecProblem(await inject('GET', '/mcp/v1/tools', { authorization: 'Bearer a.b' }), 'token_malformed');
    expectSpecProblem(await inject('GET', '/mcp/v1/tools', { authorization: `Bearer ${expired}` }), 'token_expired');
    expectSpecProblem(await inject('GET', '/mcp/v1/tools', await t.auth('u-susp')), 'account_suspended');
    expectSpecProblem(await inject('GET', '/mcp/v1/tools', await t.auth('u-ghost')), 'unknown_account');
    expectSpecProblem(
      await inject('GET', '/mcp/v1/tools', { authorization: 'Bearer agk_unknown00000000000000000000000000' }),
      'invalid_api_key',
    );
    expectSpecProblem(await inject('GET', '/mcp/v1/tools?limit=x', admin), 'invalid_query');
    expectSpecProblem(await inject('POST', '/agent/v1/agents/search', json, '{'), 'invalid_json');
    expectSpecProblem(await inject('POST', '/agent/v1/agents/search', json, '[]'), 'invalid_request');
    expectSpecProblem(
      await inject('POST', '/agent/v1/agents/search', { ...admin, 'content-type': 'text/plain' }, 'x'),
      'unsupported_content_type',
    );
    expectSpecProblem(await inject('POST', '/agent/v1/agents/search', json, '{"limit":"x"}'), 'invalid_field');
    expectSpecProblem(
      await inject('POST', '/agent/v1/agents/search', json, '{"limit":"x","offset":-1}'),
      'validation_failed',
    );
    expectSpecProblem(await inject('GET', '/registry/v1/workspaces/ws-b/export', admin), 'not_found');
    expectSpecProblem(
      await inject('POST', '/v1/traces', { ...(await t.auth('u-viewer')), 'content-type': 'application/json' }, '{}'),
      'access_denied',
    );
  });
});
