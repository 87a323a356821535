/**
 * A real OpenID provider (panva's oidc-provider) issues client-credentials access tokens as JWTs
 * (RFC 9068); the gateway, trusting it by issuer and JWKS URL, takes them as the service account of
 * the agent bound to the client. Everything over real HTTP: the token endpoint, the JWKS, the API.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const AUDIENCE = 'https://gateway.test/api';
let server: http.Server;
let issuer: string;
let t: TestApp;

beforeAll(async () => {
  server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'op-1', alg: 'RS256', use: 'sig' }] },
    clients: [
      {
        client_id: 'client-ag-1',
        client_secret: 'a-secret-of-the-agent-ag-1',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
      {
        client_id: 'client-unbound',
        client_secret: 'a-secret-of-a-client-without-agent',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
    ],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'api',
          audience: AUDIENCE,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  const handle = provider.callback();
  server.on('request', (req, res) => void handle(req, res));
  t = await startTestApp({ env: { AUTH_JWKS_URL: `${issuer}/jwks`, AUTH_ISSUERS: issuer, AUTH_AUDIENCE: AUDIENCE } });
});

afterAll(async () => {
  await t.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function clientCredentials(clientId: string, secret: string): Promise<Response> {
  return fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'api', resource: AUDIENCE }),
  });
}

describe('client-credentials JWTs from a real OpenID provider', () => {
  it('act as the service account of the agent bound to the client', async () => {
    const res = await clientCredentials('client-ag-1', 'a-secret-of-the-agent-ag-1');
    expect(res.status).toBe(200);
    const { access_token: token, token_type: type } = (await res.json()) as {
      access_token: string;
      token_type: string;
    };
    expect(type).toBe('Bearer');
    expect(token.split('.')).toHaveLength(3);

    const graph = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: { query: '{ viewer { kind orgId agent { id } } }' },
    });
    expect(graph.statusCode).toBe(200);
    expect(graph.json()).toEqual({
      data: { viewer: { kind: 'SERVICE_ACCOUNT', orgId: 'org-a', agent: { id: 'ag-1' } } },
    });

    const tools = await t.app.inject({
      method: 'GET',
      url: '/mcp/v1/tools',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(tools.statusCode).toBe(200);
  });

  it('a token of a client bound to no agent is 401 token_service_account_unbound; a wrong secret gets no token', async () => {
    const res = await clientCredentials('client-unbound', 'a-secret-of-a-client-without-agent');
    const { access_token: token } = (await res.json()) as { access_token: string };
    const tools = await t.app.inject({
      method: 'GET',
      url: '/mcp/v1/tools',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(tools.statusCode).toBe(401);
    expect(tools.json<{ code: string }>().code).toBe('token_service_account_unbound');
    expect((await clientCredentials('client-ag-1', 'wrong')).status).toBe(401);
  });
});
