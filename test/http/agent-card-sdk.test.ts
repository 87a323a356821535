/**
 * The A2A JavaScript SDK (@a2a-js/sdk 1.3.0) reads an agent's card from the running service over
 * real HTTP: `DefaultAgentCardResolver` fetches it (with the caller's bearer credential) and parses
 * it into the SDK's `AgentCard`. The SDK's own codec writes back exactly the JSON we served, so no
 * member we send is unknown to it, misnamed or of the wrong shape.
 *
 * Types: the SDK's `AgentCard` is the protobuf message as ts-proto represents it in memory (a oneof
 * is `{ $case, value }`, proto3 defaults such as `tenant: ''` are required members), not its JSON
 * form, so no JSON card is assignable to it as a whole; the SDK turns JSON into it with
 * `AgentCard.fromJSON`, which the resolver calls. The members whose JSON form is the in-memory form
 * are assigned to the SDK's types below, checked by `npm run typecheck`.
 */
import type { AddressInfo } from 'node:net';
import { AgentCard, type AgentInterface, type AgentSkill } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentCardJson } from '../../src/agents/agent-card.ts';
import { AG2_ENDPOINT, cardBundle } from '../fixtures/card-bundle.ts';
import { agentCardErrors } from '../helpers/discovery-schemas.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let base: string;
let authorization: string;

/** `fetch` with the caller's bearer credential, as an A2A client configured for this registry sends it. */
const withBearer: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set('authorization', authorization);
  return fetch(input, { ...init, headers });
};

beforeAll(async () => {
  t = await startTestApp({ bundle: cardBundle() });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  authorization = (await t.auth('u-admin')).authorization;
});
afterAll(async () => {
  await t.close();
});

describe('@a2a-js/sdk resolving an agent card', () => {
  it('fetches and parses the card into the SDK type, every member kept', async () => {
    const resolver = new DefaultAgentCardResolver({ fetchImpl: withBearer });
    const resolved: AgentCard = await resolver.resolve(`${base}/`, 'agent/v1/agents/ag-1/card');
    expect(resolved.name).toBe('Invoice Parser');
    expect(resolved.version).toBe('v2');
    expect(resolved.supportedInterfaces).toEqual([
      {
        url: `${base}/agent/v1/agents/ag-1/card`,
        protocolBinding: 'urn:agent-registry:no-endpoint',
        tenant: '',
        protocolVersion: '1.0',
      },
    ]);
    expect(resolved.securitySchemes.bearer?.scheme).toEqual({
      $case: 'httpAuthSecurityScheme',
      value: {
        scheme: 'Bearer',
        bearerFormat: 'JWT or API key',
        description:
          "A JWT of the organization's trusted issuer (user or client-credentials token), or an agent API key",
      },
    });
    expect(resolved.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    expect(resolved.skills.map((s) => [s.id, s.tags])).toEqual([
      ['sk-1', ['summarize']],
      ['sk-hidden', ['audit', 'invoices']],
    ]);

    const served = await withBearer(`${base}/agent/v1/agents/ag-1/card`);
    const json = (await served.json()) as AgentCardJson;
    expect(agentCardErrors(json)).toBeNull();
    expect(AgentCard.toJSON(resolved)).toEqual(json);
  });

  it('accepts the JSON members that share its types', async () => {
    const res = await withBearer(`${base}/agent/v1/agents/ag-2/card`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as AgentCardJson;
    const plain: Pick<
      AgentCard,
      'name' | 'description' | 'version' | 'defaultInputModes' | 'defaultOutputModes' | 'iconUrl'
    > = card;
    const interfaces: Omit<AgentInterface, 'tenant'>[] = card.supportedInterfaces;
    const skills: Pick<AgentSkill, 'id' | 'name' | 'description' | 'tags'>[] = card.skills;
    expect([plain.name, plain.version, interfaces[0]?.url, skills]).toEqual([
      'Travel Planner',
      '1.4.0',
      AG2_ENDPOINT,
      [],
    ]);
    const resolved = await new DefaultAgentCardResolver({ fetchImpl: withBearer }).resolve(
      `${base}/`,
      'agent/v1/agents/ag-2/card',
    );
    expect(resolved.supportedInterfaces[0]).toEqual({
      url: AG2_ENDPOINT,
      protocolBinding: 'HTTP+JSON',
      tenant: '',
      protocolVersion: '1.0',
    });
  });

  it('gets the problem of an unreadable card as a failed resolution', async () => {
    authorization = (await t.auth('u-viewer')).authorization;
    try {
      const resolver = new DefaultAgentCardResolver({ fetchImpl: withBearer });
      await expect(resolver.resolve(`${base}/`, 'agent/v1/agents/ag-3/card')).rejects.toThrow(/: 403$/);
    } finally {
      authorization = (await t.auth('u-admin')).authorization;
    }
  });
});
