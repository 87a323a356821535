/**
 * `GET /agent/v1/agents/{agent_id}/card`: the agent as an A2A v1.0 AgentCard, every answer checked
 * against the JSON Schema written from the A2A proto (test/fixtures/schemas/). Skills follow the
 * agent's active `uses_skill` relationships and only readable skills show; absolute URLs follow the
 * base URL rule (PUBLIC_BASE_URL, else the validated Host header; forwarded headers never read).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CARD_MAX_SKILLS } from '../../src/agents/agent-card.ts';
import { loadConfig } from '../../src/config.ts';
import { AG2_ENDPOINT, cardBundle } from '../fixtures/card-bundle.ts';
import { agentCardErrors } from '../helpers/discovery-schemas.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const HOST = 'gw.test:8080';
const BEARER = {
  httpAuthSecurityScheme: {
    scheme: 'Bearer',
    bearerFormat: 'JWT or API key',
    description: "A JWT of the organization's trusted issuer (user or client-credentials token), or an agent API key",
  },
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ bundle: cardBundle() });
});
afterAll(async () => {
  await t.close();
});

async function card(app: TestApp, id: string, user = 'u-admin', headers: Record<string, string> = {}) {
  return app.app.inject({
    method: 'GET',
    url: `/agent/v1/agents/${id}/card`,
    headers: { host: HOST, ...(await app.auth(user)), ...headers },
  });
}

/** The card's body after checking it against the AgentCard schema. */
function valid(res: { statusCode: number; json: () => unknown }): Record<string, unknown> {
  expect(res.statusCode).toBe(200);
  const body = res.json() as Record<string, unknown>;
  expect(agentCardErrors(body)).toBeNull();
  return body;
}

describe('an agent card', () => {
  it('is the agent as an AgentCard: skills of uses_skill, a registry-only interface, the version label', async () => {
    const res = await card(t, 'ag-1');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers.vary).toBe('accept');
    expect(valid(res)).toEqual({
      name: 'Invoice Parser',
      description: 'Invoice Parser, an agent of the workspace Team',
      supportedInterfaces: [
        {
          url: 'http://gw.test:8080/agent/v1/agents/ag-1/card',
          protocolBinding: 'urn:agent-registry:no-endpoint',
          protocolVersion: '1.0',
        },
      ],
      version: 'v2',
      capabilities: {},
      securitySchemes: { bearer: BEARER },
      securityRequirements: [{ schemes: { bearer: {} } }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [
        { id: 'sk-1', name: 'summarize', description: 'The summarize skill', tags: ['summarize'] },
        {
          id: 'sk-hidden',
          name: 'Find duplicates',
          description: 'Finds invoices paid twice.',
          tags: ['audit', 'invoices'],
        },
      ],
      iconUrl: 'http://gw.test:8080/agent/v1/agents/ag-1/profile-image',
    });
  });

  it('shows only the skills the caller can read', async () => {
    const body = valid(await card(t, 'ag-1', 'u-viewer'));
    expect((body.skills as { id: string }[]).map((s) => s.id)).toEqual(['sk-1']);
  });

  it("takes the interface, description and version from the agent's document", async () => {
    const body = valid(await card(t, 'ag-2', 'u-viewer'));
    expect(body).toMatchObject({
      name: 'Travel Planner',
      description: 'Plans trips and books travel within policy.',
      supportedInterfaces: [{ url: AG2_ENDPOINT, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }],
      version: '1.4.0',
      skills: [],
    });
  });

  it('answers in the media type the AI catalog names when the client asks for it by name', async () => {
    const named = await card(t, 'ag-1', 'u-admin', { accept: 'application/a2a-agent-card+json' });
    expect(named.headers['content-type']).toBe('application/a2a-agent-card+json');
    valid(named);
    const refused = await card(t, 'ag-1', 'u-admin', { accept: 'application/a2a-agent-card+json;q=0, */*' });
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
  });

  it('refuses a query parameter, and answers 404 for another kind of artifact', async () => {
    const query = await t.app.inject({
      method: 'GET',
      url: '/agent/v1/agents/ag-1/card?x=1',
      headers: { host: HOST, ...(await t.auth('u-admin')) },
    });
    expect([query.statusCode, query.json<{ code: string }>().code]).toEqual([400, 'invalid_query']);
    const skill = await card(t, 'sk-1');
    expect([skill.statusCode, skill.json<{ code: string }>().code]).toEqual([404, 'not_found']);
  });
});

describe('the base URL of a card', () => {
  it.each([
    ['a path', 'evil.example/x'],
    ['credentials', 'user@evil.example'],
    ['a space', 'evil example'],
    ['a bad IPv6 literal', '[zz::1]'],
    ['a port out of range', 'gw.test:99999'],
    ['a query', 'gw.test?x=1'],
  ])('refuses a Host header with %s (400 invalid_request)', async (_what, host) => {
    const res = await card(t, 'ag-1', 'u-admin', { host });
    expect([res.statusCode, res.json<{ code: string }>().code]).toEqual([400, 'invalid_request']);
  });

  it('uses a valid Host (IPv6 too) and never a forwarded header', async () => {
    const res = await card(t, 'ag-1', 'u-admin', {
      host: '[::1]:8080',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
      forwarded: 'host=evil.example;proto=https',
    });
    expect(valid(res).iconUrl).toBe('http://[::1]:8080/agent/v1/agents/ag-1/profile-image');
  });

  it('answers each Host with its own URLs: an answer built from a Host is not cached', async () => {
    const first = await card(t, 'ag-3', 'u-admin', { host: 'one.example' });
    const second = await card(t, 'ag-3', 'u-admin', { host: 'two.example' });
    expect(valid(first).iconUrl).toBe('http://one.example/agent/v1/agents/ag-3/profile-image');
    expect(second.headers['x-cache']).toBeUndefined();
    expect(valid(second).iconUrl).toBe('http://two.example/agent/v1/agents/ag-3/profile-image');
  });

  it('with PUBLIC_BASE_URL, uses it whatever the Host, and caches the answer', async () => {
    const fixed = await startTestApp({
      bundle: cardBundle(),
      env: { PUBLIC_BASE_URL: 'https://registry.a.example/gw/' },
    });
    try {
      const first = await card(fixed, 'ag-1', 'u-admin', { host: 'evil example' });
      expect(first.headers['x-cache']).toBeUndefined();
      expect(valid(first).supportedInterfaces).toEqual([
        {
          url: 'https://registry.a.example/gw/agent/v1/agents/ag-1/card',
          protocolBinding: 'urn:agent-registry:no-endpoint',
          protocolVersion: '1.0',
        },
      ]);
      const second = await card(fixed, 'ag-1', 'u-admin', { host: 'other.example' });
      expect(second.headers['x-cache']).toBe('hit');
      expect(second.body).toBe(first.body);
    } finally {
      await fixed.close();
    }
  });
});

describe('PUBLIC_BASE_URL', () => {
  it.each([
    ['not a URL', 'gw.example'],
    ['not http(s)', 'ftp://gw.example'],
    ['credentials', 'https://user:secret@gw.example'],
    ['a query', 'https://gw.example/?x=1'],
    ['a fragment', 'https://gw.example/#top'],
  ])('refuses %s at start-up, naming the variable', (_what, value) => {
    expect(() => loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: value })).toThrow(/^PUBLIC_BASE_URL must/);
  });

  it('is kept without its trailing slashes, host lower-cased and default port dropped', () => {
    expect(loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://GW.example:443/registry//' }).publicBaseUrl).toBe(
      'https://gw.example/registry',
    );
    expect(loadConfig({ NODE_ENV: 'test' }).publicBaseUrl).toBeUndefined();
  });
});

describe('the security schemes of a card', () => {
  it('add OpenID Connect discovery for each configured issuer that is a URL', async () => {
    const withIssuers = await startTestApp({
      bundle: cardBundle(),
      env: { AUTH_ISSUERS: 'https://login.a.example/realms/a/,urn:other-issuer,https://sso.a.example' },
    });
    try {
      const body = valid(await card(withIssuers, 'ag-1'));
      expect(body.securitySchemes).toEqual({
        bearer: BEARER,
        'oidc-1': {
          openIdConnectSecurityScheme: {
            openIdConnectUrl: 'https://login.a.example/realms/a/.well-known/openid-configuration',
            description: 'Tokens of the trusted issuer https://login.a.example/realms/a/, sent as bearer tokens',
          },
        },
        'oidc-2': {
          openIdConnectSecurityScheme: {
            openIdConnectUrl: 'https://sso.a.example/.well-known/openid-configuration',
            description: 'Tokens of the trusted issuer https://sso.a.example, sent as bearer tokens',
          },
        },
      });
      expect(body.securityRequirements).toEqual([
        { schemes: { bearer: {} } },
        { schemes: { 'oidc-1': {} } },
        { schemes: { 'oidc-2': {} } },
      ]);
    } finally {
      await withIssuers.close();
    }
  });
});

describe('Agent.card over GraphQL', () => {
  it('is the REST answer, for a root lookup and for _entities', async () => {
    const rest = (await card(t, 'ag-1', 'u-viewer')).json();
    const query = async (q: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { host: HOST, 'content-type': 'application/json', ...(await t.auth('u-viewer')) },
          payload: { query: q },
        })
      ).json<{ data: Record<string, unknown> }>().data;
    expect(((await query('{ agent(id: "ag-1") { card } }')).agent as { card: unknown }).card).toEqual(rest);
    const entities = await query(
      '{ _entities(representations: [{__typename: "Agent", id: "ag-1"}]) { ... on Agent { card } } }',
    );
    expect((entities._entities as { card: unknown }[])[0]?.card).toEqual(rest);
  });
});

describe('the bound of a card', () => {
  let many: TestApp;
  beforeAll(async () => {
    const bundle = cardBundle();
    const sk1 = bundle.artifacts.find((a) => a.id === 'sk-1') as Record<string, unknown>;
    for (let i = 1; i <= 105; i++) {
      const id = `sk-many-${String(i).padStart(3, '0')}`;
      bundle.artifacts.push({ ...sk1, id, name: id, display_name: id } as never);
      bundle.relationships.push({
        from: { id: 'ag-3', kind: 'agent' },
        to: { id, kind: 'skill' },
        rel_type: 'uses_skill',
        provenance: 'declared',
        relationship_status: 'active',
      });
    }
    many = await startTestApp({ bundle, env: { GRAPHQL_MAX_COST: '150' } });
  });
  afterAll(async () => {
    await many.close();
  });

  it(`holds at most ${CARD_MAX_SKILLS} skills, the first by id`, async () => {
    const skills = valid(await card(many, 'ag-3')).skills as { id: string }[];
    expect(skills).toHaveLength(CARD_MAX_SKILLS);
    expect([skills[0]?.id, skills[99]?.id]).toEqual(['sk-many-001', 'sk-many-100']);
  });

  it('spends the GraphQL list budget with its skills, like Agent.usedSkills', async () => {
    const query = async (q: string) =>
      (
        await many.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { host: HOST, 'content-type': 'application/json', ...(await many.auth('u-admin')) },
          payload: { query: q },
        })
      ).json<{ data: unknown; errors?: { extensions: { code: string; limit: string } }[] }>();
    expect((await query('{ agent(id: "ag-3") { card } }')).errors).toBeUndefined();
    const twice = await query('{ a: agent(id: "ag-3") { card } b: agent(id: "ag-3") { card } }');
    expect(twice.errors?.[0]?.extensions).toMatchObject({ code: 'OPERATION_TOO_LARGE', limit: 'items' });
  });
});
