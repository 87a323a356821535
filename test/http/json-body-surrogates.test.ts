/**
 * Lone UTF-16 surrogates escaped in a JSON request body (`"\ud800"`, which JSON.parse keeps) are read
 * as U+FFFD, the text every store keeps, on both engines. Before, an MCP server version so named was
 * stored as U+FFFD but looked up as parsed: publishing it again answered 500 instead of 409.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverJson } from '../fixtures/mcp-registry/servers.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { expectProblem } from '../helpers/problem.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const NAME = 'io.github.acme/lone';

function suite(engine: string, env: () => Record<string, string>) {
  describe(`a JSON body with a lone surrogate escaped (${engine})`, () => {
    let t: TestApp;
    let admin: { authorization: string };
    beforeAll(async () => {
      t = await startTestApp({ env: env() });
      admin = await t.auth('u-admin');
    });
    afterAll(async () => {
      await t.close();
    });

    const publish = (version: string, description: string) => {
      const payload = JSON.stringify({ ...serverJson(NAME, version), description });
      // JSON.stringify escapes a lone surrogate: the body is valid UTF-8 whose JSON names one.
      expect(payload).toMatch(/\\ud[89a-f]/);
      return t.app.inject({
        method: 'POST',
        url: '/v0.1/publish?workspace_id=ws-a-team',
        headers: { 'content-type': 'application/json', ...admin },
        payload,
      });
    };

    it('stores and answers U+FFFD; the same version again, in either lone form, is 409 and changes nothing', async () => {
      const first = await publish('1.0.0-a\ud800', 'made by \udc00 hand');
      expect(first.statusCode).toBe(200);
      const server = first.json<{ server: { version: string; description: string } }>().server;
      expect(server.version).toBe('1.0.0-a\ufffd');
      expect(server.description).toBe('made by \ufffd hand');

      expectProblem(await publish('1.0.0-a\ud800', 'again'), 409, 'version_exists');
      expectProblem(await publish('1.0.0-a\udfff', 'again'), 409, 'version_exists');

      const versions = await t.registry.getMcpServerVersionsByName(['ws-a-team'], NAME);
      expect(versions.map((v) => v.version)).toEqual(['1.0.0-a\ufffd']);
      const read = await t.app.inject({
        method: 'GET',
        url: `/v0.1/servers/${encodeURIComponent(NAME)}/versions/${encodeURIComponent('1.0.0-a\ufffd')}`,
        headers: admin,
      });
      expect(read.statusCode).toBe(200);
      expect(read.json<{ server: { description: string } }>().server.description).toBe('made by \ufffd hand');
    });
  });
}

suite('sqlite', () => ({}));
const database = await fileDatabase('gw_json_body_surrogates');
if (database !== null) suite('postgres', () => database);
