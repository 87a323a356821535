/**
 * `GET /.well-known/ai-catalog.json`: an AI Catalog (specVersion 1.0) of the agents the caller may
 * read, each entry pointing to the agent's card; every answer checked against the JSON Schema
 * written from the AI Catalog specification (test/fixtures/schemas/). Credentials are needed like
 * for every read, and the catalog holds at most 1,000 entries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
import { cardBundle } from '../fixtures/card-bundle.ts';
import { agentCardErrors, aiCatalogErrors } from '../helpers/discovery-schemas.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const HOST = 'gw.test:8080';
const CARD = 'application/a2a-agent-card+json';

interface Catalog {
  specVersion: string;
  host: { displayName: string; identifier: string };
  entries: { identifier: string; displayName: string; url: string }[];
  metadata?: unknown;
}

async function catalog(app: TestApp, authorization: string | undefined) {
  return app.app.inject({
    method: 'GET',
    url: '/.well-known/ai-catalog.json',
    headers: { host: HOST, ...(authorization !== undefined ? { authorization } : {}) },
  });
}

/** The catalog after checking its status, media type and schema. */
function valid(res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }): Catalog {
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/ai-catalog+json');
  const body = res.json() as Catalog;
  expect(aiCatalogErrors(body)).toBeNull();
  return body;
}

describe('the AI catalog', () => {
  let t: TestApp;
  const user = async (sub: string, org?: string) => (await t.auth(sub, org)).authorization;
  beforeAll(async () => {
    t = await startTestApp({ bundle: cardBundle() });
  });
  afterAll(async () => {
    await t.close();
  });

  it('needs credentials like every read', async () => {
    const res = await catalog(t, undefined);
    expect([res.statusCode, res.json<{ code: string }>().code]).toEqual([401, 'token_missing']);
  });

  it("lists the caller's readable agents by name, each with its card's URL", async () => {
    expect(valid(await catalog(t, await user('u-viewer')))).toEqual({
      specVersion: '1.0',
      host: { displayName: 'Org A', identifier: 'http://gw.test:8080' },
      entries: [
        {
          identifier: 'urn:agent-registry:org-a:agent:ag-1',
          displayName: 'Invoice Parser',
          mediaType: CARD,
          url: 'http://gw.test:8080/agent/v1/agents/ag-1/card',
          version: 'v2',
          updatedAt: '2026-02-01T00:00:00Z',
        },
        {
          identifier: 'urn:agent-registry:org-a:agent:ag-2',
          displayName: 'Travel Planner',
          mediaType: CARD,
          url: 'http://gw.test:8080/agent/v1/agents/ag-2/card',
          version: '1.4.0',
          description: 'Plans trips and books travel within policy.',
          tags: ['travel', 'booking'],
          updatedAt: '2026-01-01T00:00:00Z',
        },
      ],
    });
  });

  it.each([
    ['an organization admin', () => user('u-admin'), 'Org A', ['ag-3', 'ag-1', 'ag-2']],
    ['a user of another organization', () => user('u-b', 'org-b'), 'Org B', ['ag-b1']],
    ['a service account (API key of ag-2)', async () => `Bearer ${TEST_API_KEY}`, 'Org A', ['ag-2']],
    ['a user without membership', () => user('u-none'), 'Org A', []],
  ])('shows %s exactly what it reads', async (_who, header, org, agents) => {
    const body = valid(await catalog(t, await header()));
    expect(body.host.displayName).toBe(org);
    expect(body.entries.map((e) => e.identifier.split(':').pop())).toEqual(agents);
    expect(body.metadata).toBeUndefined();
  });

  it('points to cards the caller can fetch', async () => {
    const authorization = await user('u-admin');
    const body = valid(await catalog(t, authorization));
    for (const entry of body.entries) {
      const url = new URL(entry.url);
      expect(url.host).toBe(HOST);
      const res = await t.app.inject({ method: 'GET', url: url.pathname, headers: { host: HOST, authorization } });
      expect(res.statusCode, entry.url).toBe(200);
      expect(agentCardErrors(res.json())).toBeNull();
      expect(res.json<{ name: string }>().name).toBe(entry.displayName);
    }
  });
});

describe('the bound of the AI catalog', () => {
  let t: TestApp;
  beforeAll(async () => {
    const bundle = cardBundle();
    const ag3 = bundle.artifacts.find((a) => a.id === 'ag-3') as Record<string, unknown>;
    for (let i = 1; i <= 1005; i++) {
      const n = String(i).padStart(4, '0');
      bundle.artifacts.push({ ...ag3, id: `bulk-${n}`, name: `Bulk ${n}`, display_name: `Bulk ${n}` } as never);
    }
    t = await startTestApp({ bundle });
  });
  afterAll(async () => {
    await t.close();
  });

  it('holds at most 1,000 entries and says how many there are', async () => {
    const body = valid(await catalog(t, (await t.auth('u-admin')).authorization));
    expect(body.entries).toHaveLength(1000);
    expect([body.entries[0]?.displayName, body.entries[999]?.displayName]).toEqual(['Bulk 0001', 'Bulk 1000']);
    expect(body.metadata).toEqual({ truncated: true, totalEntries: 1008 });
  });
});
