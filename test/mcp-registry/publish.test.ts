/**
 * `POST /v0.1/publish`: the specification's valid example documents are accepted and answered as a
 * ServerResponse, its invalid ones refused with the error shape (422, the field named); the rules
 * beyond the schema (`$schema`, versions, size), which server a document is a version of, and who may
 * publish where (can_create_content on the target workspace; never anonymous).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
import { examples, expectServerJson, expectServerResponse, isServerJson } from '../fixtures/mcp-registry/schemas.ts';
import { SCHEMA_2025_12_11, serverJson } from '../fixtures/mcp-registry/servers.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { MAX_VERSIONS } from '../../src/mcp-servers/list-servers.ts';
import { expectedResponse } from './fixture.ts';

let t: TestApp;
let admin: { authorization: string };
beforeAll(async () => {
  t = await startTestApp({ env: { MCP_REGISTRY_PUBLIC_WORKSPACES: 'ws-a-team' } });
  admin = await t.auth('u-admin');
});
afterAll(async () => {
  await t.close();
});

const NO_USAGE = { window_days: 30, calls: 0, error_rate: null, p95_latency_ms: null };

function publish(doc: unknown, headers: Record<string, string> = admin, query = 'workspace_id=ws-a-team') {
  return t.app.inject({
    method: 'POST',
    url: `/v0.1/publish${query === '' ? '' : `?${query}`}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(doc),
  });
}

/** The fields a 422 names: `field`, or every `errors[].field`; each error carries the official registry's members too. */
function fieldsOf(body: { field?: string; errors?: { field: string; message: string; location: string }[] }) {
  for (const e of body.errors ?? []) {
    expect(e.message).toEqual(expect.any(String));
    expect(e.location).toMatch(/^body/);
  }
  return body.field !== undefined ? [body.field] : (body.errors ?? []).map((e) => e.field);
}

describe('the specification examples', () => {
  it.each(examples('valid'))('%s is published as it is', async (_file, doc) => {
    expectServerJson(doc);
    const res = await publish(doc);
    expect(res.statusCode).toBe(200);
    const body = res.json<Record<string, unknown>>();
    expectServerResponse(body);
    const name = doc.name as string;
    const [stored] = await t.registry.getMcpServerVersionsByName(['ws-a-team'], name);
    expect(stored?.id).toBe(name.slice(name.indexOf('/') + 1));
    expect(stored?.created_by).toBe('u-admin');
    expect(body).toEqual(expectedResponse(stored as NonNullable<typeof stored>, NO_USAGE));
    expect(body.server).toEqual(doc);
    const read = await t.app.inject({
      method: 'GET',
      url: `/v0.1/servers/${encodeURIComponent(name)}/versions/latest`,
    });
    expect(read.json<{ server: unknown }>().server).toEqual(doc);
  });

  const where: Record<string, string> = {
    'bad-name-pattern.json': '/name',
    'description-too-long.json': '/description',
    'missing-name.json': '/name',
    'package-version-latest.json': '/packages/0/version',
    'positional-argument-missing-value.json': '/packages/0/packageArguments/0',
  };
  it.each(examples('invalid'))('%s is refused, as it is and with a $schema, naming its field', async (file, doc) => {
    expect(isServerJson(doc), 'an invalid example').toBe(false);
    for (const sent of [doc, { $schema: SCHEMA_2025_12_11, ...doc }]) {
      const res = await publish(sent);
      const body = expectProblem(
        res,
        422,
        res.json<{ code: string }>().code === 'invalid_field' ? 'invalid_field' : 'validation_failed',
      );
      expect(body.error).toBe(body.detail);
      const at = where[file] as string;
      expect(
        fieldsOf(body).filter((f) => f === at || f.startsWith(`${at}/`)).length,
        `a field at ${at}`,
      ).toBeGreaterThan(0);
    }
    expect(await t.registry.getMcpServerVersionsByName(['ws-a-team'], String(doc.name))).toEqual([]);
  });
});

describe('rules beyond the schema', () => {
  it.each([
    ['no $schema', { $schema: undefined }, '/$schema'],
    [
      'a $schema of no released version',
      { $schema: 'https://static.modelcontextprotocol.io/schemas/2024-01-01/server.schema.json' },
      '/$schema',
    ],
    ['an empty version', { version: '' }, '/version'],
    ['a version with white space around it', { version: ' 1.0.0 ' }, '/version'],
    ['version latest', { version: 'latest' }, '/version'],
    ['a version range', { version: '^1.2.3' }, '/version'],
    ['a wildcard version', { version: '1.x' }, '/version'],
    [
      'a package version range',
      { packages: [{ registryType: 'npm', identifier: 'p', version: '>=1.0.0', transport: { type: 'stdio' } }] },
      '/packages/0/version',
    ],
    [
      'publisher metadata over 4 KiB',
      { _meta: { 'io.modelcontextprotocol.registry/publisher-provided': { blob: 'x'.repeat(5000) } } },
      '/_meta/io.modelcontextprotocol.registry~1publisher-provided',
    ],
  ])('%s: 422 at its field', async (_name, change, field) => {
    const doc = JSON.parse(JSON.stringify({ ...serverJson('io.github.rules/r', '1.0.0'), ...change })) as object;
    const body = expectProblem(await publish(doc), 422, 'invalid_field');
    expect(body.field).toBe(field);
  });

  it('bodies that are not a document: 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v0.1/publish?workspace_id=ws-a-team',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(expectProblem(res, 400, 'invalid_json').error).toEqual(expect.any(String));
    expectProblem(await publish([serverJson('io.github.rules/r', '1.0.0')]), 400, 'invalid_request');
    const big = serverJson('io.github.rules/big', '1.0.0', { title: 'big', padding: 'x'.repeat(40_000) });
    expectProblem(await publish(big), 400, 'invalid_request');
  });
});

describe('which server a version belongs to', () => {
  it('a new name gets the id after its slash; its next version goes to the same server and workspace', async () => {
    expect((await publish(serverJson('io.github.acme/alpha', '1.0.0'))).statusCode).toBe(200);
    // No workspace named: the existing server's.
    const next = await publish(serverJson('io.github.acme/alpha', '1.1.0'), admin, '');
    expect(next.statusCode).toBe(200);
    const versions = await t.registry.getMcpServerVersionsByName(['ws-a-team'], 'io.github.acme/alpha');
    expect(versions.map((v) => [v.id, v.version, v.is_latest])).toEqual([
      ['alpha', '1.0.0', false],
      ['alpha', '1.1.0', true],
    ]);
    expectProblem(await publish(serverJson('io.github.acme/alpha', '1.1.0')), 409, 'version_exists');
    expectProblem(
      await publish(serverJson('io.github.acme/alpha', '2.0.0'), admin, 'workspace_id=ws-a-sub'),
      409,
      'name_taken',
    );
    expectProblem(
      await publish(serverJson('io.github.acme/alpha', '2.0.0'), admin, 'server_id=other'),
      409,
      'name_taken',
    );
  });

  it('an explicit server_id, a derived id that is taken, and a workspace named by header', async () => {
    const taken = expectProblem(await publish(serverJson('com.other/alpha', '1.0.0')), 409, 'name_taken');
    expect(taken.detail).toMatch(/server_id/);
    const res = await publish(
      serverJson('com.other/alpha', '1.0.0'),
      { ...admin, 'x-workspace-id': 'ws-a-sub' },
      'server_id=other-alpha',
    );
    expect(res.statusCode).toBe(200);
    const [v] = await t.registry.getMcpServerVersionsByName(['ws-a-sub'], 'com.other/alpha');
    expect([v?.id, v?.workspace_id]).toEqual(['other-alpha', 'ws-a-sub']);
    expectProblem(
      await publish(
        serverJson('com.other/beta', '1.0.0'),
        { ...admin, 'x-workspace-id': 'ws-a-sub' },
        'workspace_id=ws-a-team',
      ),
      400,
      'invalid_query',
    );
    expectProblem(await publish(serverJson('com.other/beta', '1.0.0'), admin, 'server_id=a%2Fb'), 400, 'invalid_query');
  });
});

describe('who may publish', () => {
  it('never anonymous, even where anonymous reading is allowed', async () => {
    const problem = expectProblem(await publish(serverJson('io.github.who/w', '1.0.0'), {}), 401, 'token_missing');
    expect(problem.error).toBe(problem.detail);
  });

  it('a viewer: 403; a workspace of another organization: 404; no workspace for a user: 400', async () => {
    const viewer = await t.auth('u-viewer');
    expectProblem(await publish(serverJson('io.github.who/w', '1.0.0'), viewer), 403, 'access_denied');
    expectProblem(await publish(serverJson('io.github.who/w', '1.0.0'), admin, 'workspace_id=ws-b'), 404, 'not_found');
    expectProblem(await publish(serverJson('io.github.who/w', '1.0.0'), admin, ''), 400, 'invalid_query');
    expect(await t.registry.getMcpServerVersionsByName(['ws-a-team', 'ws-b'], 'io.github.who/w')).toEqual([]);
  });

  it('a service account publishes to its own workspace by default', async () => {
    const res = await publish(
      serverJson('io.github.who/agent', '1.0.0'),
      { authorization: `Bearer ${TEST_API_KEY}` },
      '',
    );
    expect(res.statusCode).toBe(200);
    const [v] = await t.registry.getMcpServerVersionsByName(['ws-a-sub'], 'io.github.who/agent');
    expect([v?.workspace_id, v?.created_by]).toEqual(['ws-a-sub', 'ag-2']);
    const elsewhere = await publish(serverJson('io.github.who/agent2', '1.0.0'), {
      authorization: `Bearer ${TEST_API_KEY}`,
    });
    expectProblem(elsewhere, 403, 'access_denied');
  });

  it('a server holds at most MAX_VERSIONS versions; a version of a server the caller cannot write names no workspace', async () => {
    const name = 'io.github.many/versions';
    for (let v = 0; v < MAX_VERSIONS; v++) expect((await publish(serverJson(name, `1.0.${v}`))).statusCode).toBe(200);
    const over = expectProblem(await publish(serverJson(name, `2.0.0`)), 400, 'invalid_request');
    expect(over.detail).toBe(`a server has at most ${MAX_VERSIONS} versions`);
    // u-viewer reads ws-a-team and may not write it: the refusal does not name the server's workspace.
    const refused = expectProblem(
      await publish(serverJson(name, '3.0.0'), await t.auth('u-viewer'), ''),
      403,
      'access_denied',
    );
    expect(refused.detail).toBe(`no permission to publish versions of ${name}`);
  });
});
