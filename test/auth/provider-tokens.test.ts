/**
 * Client-credentials tokens in the shapes identity providers issue (auth/client-tokens.ts): each is
 * a service account of the agent bound to its client, not a user token without an org. Real keys, a
 * real JWKS over loopback, a real SQLite directory; the shapes can be switched off by configuration.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import type { Authenticator } from '../../src/auth/caller.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { ApiError } from '../../src/errors.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { AUDIENCE, ISSUER, makeKeys, serveJwks, sign, type JwksServer, type Keys } from './jwks-fixture.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-providers-'));
let keys: Keys;
let jwks: JwksServer;
let store: SqliteRegistryStore;

const env = (extra: Record<string, string> = {}) => ({
  NODE_ENV: 'production',
  DATA_DIR: dir,
  AUTH_JWKS_URL: jwks.url,
  AUTH_ISSUERS: ISSUER,
  AUTH_AUDIENCE: AUDIENCE,
  ...extra,
});
const authenticator = (extra?: Record<string, string>): Promise<Authenticator> =>
  createAuthenticator(loadConfig(env(extra)), store);

beforeAll(async () => {
  keys = await makeKeys();
  jwks = await serveJwks(keys.publicJwks);
  store = new SqliteRegistryStore(path.join(dir, 'registry.sqlite'));
  await store.importBundle(parseBundle(smallBundle()));
});
afterAll(async () => {
  await jwks.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const AGENT_1 = {
  kind: 'service_account',
  orgId: 'org-a',
  agentId: 'ag-1',
  workspaceId: 'ws-a-team',
  clientId: 'client-ag-1',
};

/** Each provider's client-credentials token for client-ag-1, as the provider shapes it (no org claim). */
const PROVIDER_TOKENS: Record<string, Record<string, unknown>> = {
  'RFC 9068': { sub: 'client-ag-1', client_id: 'client-ag-1', org_id: undefined },
  Auth0: { sub: 'client-ag-1@clients', azp: 'client-ag-1', gty: 'client-credentials', org_id: undefined },
  Keycloak: {
    sub: '7c0d7d0e-6a57-4f4e-9d0e-1b8f5f2c1a11',
    azp: 'client-ag-1',
    client_id: 'client-ag-1',
    preferred_username: 'service-account-client-ag-1',
    org_id: undefined,
  },
  'Entra v2': { sub: 'f1c5b7e2-0000-4000-8000-000000000001', azp: 'client-ag-1', idtyp: 'app', org_id: undefined },
  'Entra v1': { sub: 'f1c5b7e2-0000-4000-8000-000000000001', appid: 'client-ag-1', idtyp: 'app', org_id: undefined },
};

async function outcome(a: Authenticator, claims: Record<string, unknown>): Promise<unknown> {
  try {
    return await a.authenticate(`Bearer ${await sign(claims, { key: keys.rsa, nowS: Math.floor(Date.now() / 1000) })}`);
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
}

describe('client-credentials tokens of real identity providers', () => {
  for (const [provider, claims] of Object.entries(PROVIDER_TOKENS)) {
    it(`${provider}: the service account of the agent bound to the client`, async () => {
      expect(await outcome(await authenticator(), claims)).toEqual(AGENT_1);
    });
  }

  it('user tokens of the same providers stay user tokens', async () => {
    const a = await authenticator();
    // Keycloak and Entra user tokens carry the client they were issued to in azp, and a user subject.
    expect(await outcome(a, { sub: 'u-admin', azp: 'client-ag-1', preferred_username: 'alice' })).toEqual({
      kind: 'user',
      orgId: 'org-a',
      userId: 'u-admin',
    });
    expect(await outcome(a, { sub: 'u-admin', azp: 'client-ag-1', idtyp: 'user' })).toMatchObject({ kind: 'user' });
    // An Auth0 user token: no gty, a user subject.
    expect(await outcome(a, { sub: 'u-admin', azp: 'client-ag-1' })).toMatchObject({ kind: 'user' });
    // A Keycloak user who took a service account's name, without the client_id claim, stays a user.
    expect(
      await outcome(a, { sub: 'u-admin', azp: 'client-ag-1', preferred_username: 'service-account-client-ag-1' }),
    ).toMatchObject({ kind: 'user', userId: 'u-admin' });
    // A look-alike without the provider's marker is not a service account: a user token without org.
    expect(await outcome(a, { sub: 'client-ag-1@clients', azp: 'client-ag-1', org_id: undefined })).toBe('missing_org');
  });

  it('a shape switched off by AUTH_CLIENT_TOKEN_SHAPES is read as a user token; unknown shapes are refused at start', async () => {
    const only = await authenticator({ AUTH_CLIENT_TOKEN_SHAPES: 'rfc9068' });
    expect(await outcome(only, PROVIDER_TOKENS.Auth0 ?? {})).toBe('missing_org');
    expect(await outcome(only, PROVIDER_TOKENS['RFC 9068'] ?? {})).toEqual(AGENT_1);
    expect(() => loadConfig(env({ AUTH_CLIENT_TOKEN_SHAPES: 'rfc9068,okta' }))).toThrow(ConfigError);
  });

  it('an unbound client of any shape is token_service_account_unbound', async () => {
    expect(
      await outcome(await authenticator(), {
        sub: 'x@clients',
        azp: 'x',
        gty: 'client-credentials',
        org_id: undefined,
      }),
    ).toBe('token_service_account_unbound');
  });
});
