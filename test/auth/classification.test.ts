/**
 * DESIGN §6's classification table, one test per row, and the attacks on it. Real
 * keys, a real JWKS over loopback, a real SQLite directory; the clock is frozen, never slept.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import type { Authenticator } from '../../src/auth/caller.ts';
import { loadConfig } from '../../src/config.ts';
import { ApiError, type ErrorCode } from '../../src/errors.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { TEST_API_KEY, smallBundle } from '../fixtures/small-bundle.ts';
import {
  AUDIENCE,
  ISSUER,
  b64,
  makeKeys,
  serveJwks,
  sign,
  signRawRs256,
  type JwksServer,
  type Keys,
} from './jwks-fixture.ts';

const T0 = Date.UTC(2026, 5, 1) / 1000;
let clock = T0 * 1000;
let keys: Keys;
let jwks: JwksServer;
let store: SqliteRegistryStore;
let auth: Authenticator;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-auth-'));

async function fresh(env: Record<string, string> = {}): Promise<Authenticator> {
  const config = loadConfig({
    NODE_ENV: 'production',
    DATA_DIR: dir,
    AUTH_JWKS_URL: jwks.url,
    AUTH_ISSUERS: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    ...env,
  });
  return createAuthenticator(config, store, { now: () => clock });
}

async function code(header: string | undefined, a: Authenticator = auth): Promise<ErrorCode | 'ok'> {
  try {
    await a.authenticate(header);
    return 'ok';
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
}
const bearer = (t: string) => `Bearer ${t}`;
const now = () => Math.floor(clock / 1000);

beforeAll(async () => {
  keys = await makeKeys();
  jwks = await serveJwks(keys.publicJwks);
  store = new SqliteRegistryStore(path.join(dir, 'registry.sqlite'));
  const bundle = smallBundle();
  bundle.artifacts.push({
    ...(bundle.artifacts.find((a) => a.id === 'ag-3') as object),
    identity: {
      client_id: 'key-ag-3',
      credential_kind: 'api_key',
      api_key: 'agk_expired0000000000000000000000000',
      expires_at: '2026-01-01T00:00:00Z',
    },
  } as never);
  bundle.artifacts.splice(
    bundle.artifacts.findIndex((a) => a.id === 'ag-3'),
    1,
  );
  await store.importBundle(parseBundle(bundle));
});
afterAll(async () => {
  await jwks.close();
  await store.close();
});
beforeEach(async () => {
  clock = T0 * 1000;
  jwks.mode('ok');
  auth = await fresh();
});

describe('classification table (DESIGN §6), in order', () => {
  it('token_missing: no header, or not Bearer', async () => {
    expect(await code(undefined)).toBe('token_missing');
    expect(await code('Basic dXNlcjpwYXNz')).toBe('token_missing');
    expect(await code('Bearer')).toBe('token_missing');
  });

  it('token_malformed: not compact, bad base64 or JSON, JWE, over 8 KiB', async () => {
    expect(await code(bearer('a.b'))).toBe('token_malformed');
    expect(await code(bearer(`${b64('{')}.${b64('{}')}.sig`))).toBe('token_malformed');
    expect(await code(bearer('a.b.c.d.e'))).toBe('token_malformed');
    expect(await code(bearer(`${b64({ alg: 'RS256' })}.${b64({})}.s!g`))).toBe('token_malformed');
    expect(await code(bearer(`${b64({ alg: 'RS256' })}.${'A'.repeat(9000)}.sig`))).toBe('token_malformed');
    expect(await code(bearer('short'))).toBe('token_malformed');
  });

  it('invalid_api_key: unknown or expired API key; a valid one acts as its agent', async () => {
    expect(await code(bearer('agk_unknown00000000000000000000000000'))).toBe('invalid_api_key');
    expect(await code(bearer('agk_expired0000000000000000000000000'))).toBe('invalid_api_key');
    expect(await auth.authenticate(bearer(TEST_API_KEY))).toEqual({
      kind: 'service_account',
      orgId: 'org-a',
      agentId: 'ag-2',
      workspaceId: 'ws-a-sub',
      clientId: 'client-ag-2',
    });
  });

  it('alg_not_allowed: none in any casing, HS256 signed with the RSA public key, algorithms off the list', async () => {
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      expect(
        await code(
          bearer(
            `${b64({ alg, kid: 'rsa-1' })}.${b64({ iss: ISSUER, sub: 'u-admin', org_id: 'org-a', aud: AUDIENCE })}.`,
          ),
        ),
      ).toBe('alg_not_allowed');
    }
    const hs = await new SignJWT({ iss: ISSUER, sub: 'u-admin', org_id: 'org-a', aud: AUDIENCE })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .sign(new TextEncoder().encode(keys.rsaPublicPem));
    expect(await code(bearer(hs))).toBe('alg_not_allowed');
    const rs = await sign({}, { key: keys.rsa, nowS: now() });
    expect(await code(bearer(rs), await fresh({ AUTH_ALGORITHMS: 'ES256' }))).toBe('alg_not_allowed');
  });

  it('untrusted_issuer: checked before any key fetch', async () => {
    const a = await fresh();
    const before = jwks.hits();
    expect(await code(bearer(await sign({ iss: 'https://evil.test' }, { key: keys.rsa, nowS: now() })), a)).toBe(
      'untrusted_issuer',
    );
    expect(await code(bearer(await sign({ iss: undefined }, { key: keys.rsa, nowS: now() })), a)).toBe(
      'untrusted_issuer',
    );
    expect(jwks.hits()).toBe(before);
  });

  it('unknown_key: kid not in the key set after one refresh', async () => {
    expect(await code(bearer(await sign({}, { key: keys.rsa, kid: 'rotated-away', nowS: now() })))).toBe('unknown_key');
  });

  it('alg_mismatch: the kid exists but its key is of another algorithm', async () => {
    expect(await code(bearer(await sign({}, { key: keys.ec, alg: 'ES256', kid: 'rsa-1', nowS: now() })))).toBe(
      'alg_mismatch',
    );
    expect(await code(bearer(await sign({}, { key: keys.ed, alg: 'EdDSA', kid: 'ec-1', nowS: now() })))).toBe(
      'alg_mismatch',
    );
  });

  it('signature_invalid: a tampered payload or another key with a known kid', async () => {
    const good = await sign({}, { key: keys.rsa, nowS: now() });
    const [h, , s] = good.split('.');
    const tampered = `${h}.${b64({ iss: ISSUER, aud: AUDIENCE, sub: 'u-b', org_id: 'org-b', iat: now(), exp: now() + 600 })}.${s}`;
    expect(await code(bearer(tampered))).toBe('signature_invalid');
    const { privateKey } = await (await import('jose')).generateKeyPair('RS256');
    expect(await code(bearer(await sign({}, { key: privateKey, nowS: now() })))).toBe('signature_invalid');
  });

  it('token_expired: exp passed beyond the tolerance, not within it', async () => {
    const token = await sign({ exp: now() - 31 }, { key: keys.rsa, nowS: now() - 700 });
    expect(await code(bearer(token))).toBe('token_expired');
    expect(
      await code(
        bearer(await sign({ exp: now() - 29 }, { key: keys.ec, alg: 'ES256', kid: 'ec-1', nowS: now() - 700 })),
      ),
    ).toBe('ok');
  });

  it('token_not_yet_valid: nbf or iat in the future beyond the tolerance', async () => {
    expect(await code(bearer(await sign({ nbf: now() + 31 }, { key: keys.rsa, nowS: now() })))).toBe(
      'token_not_yet_valid',
    );
    expect(await code(bearer(await sign({ iat: now() + 120 }, { key: keys.rsa, nowS: now() })))).toBe(
      'token_not_yet_valid',
    );
    expect(
      await code(bearer(await sign({ nbf: now() + 29 }, { key: keys.ed, alg: 'EdDSA', kid: 'ed-1', nowS: now() }))),
    ).toBe('ok');
  });

  it('audience_mismatch: aud missing or wrong', async () => {
    expect(await code(bearer(await sign({ aud: 'someone-else' }, { key: keys.rsa, nowS: now() })))).toBe(
      'audience_mismatch',
    );
    expect(await code(bearer(await sign({ aud: undefined }, { key: keys.rsa, nowS: now() })))).toBe(
      'audience_mismatch',
    );
  });

  it('token_rejected: unknown crit, wrong typ, exp of the wrong type', async () => {
    const claims = { iss: ISSUER, aud: AUDIENCE, sub: 'u-admin', org_id: 'org-a', iat: now(), exp: now() + 600 };
    expect(
      await code(
        bearer(await signRawRs256({ alg: 'RS256', kid: 'rsa-1', crit: ['x-magic'], 'x-magic': 1 }, claims, keys.rsa)),
      ),
    ).toBe('token_rejected');
    expect(await code(bearer(await signRawRs256({ alg: 'RS256', kid: 'rsa-1' }, claims, keys.rsa)))).toBe('ok');
    expect(await code(bearer(await sign({}, { key: keys.rsa, nowS: now(), header: { typ: 'dpop+jwt' } })))).toBe(
      'token_rejected',
    );
    expect(
      await code(
        bearer(await signRawRs256({ alg: 'RS256', kid: 'rsa-1' }, { ...claims, exp: String(now() + 600) }, keys.rsa)),
      ),
    ).toBe('token_rejected');
  });

  it('missing_identity, missing_user, missing_org', async () => {
    expect(await code(bearer(await sign({ sub: undefined }, { key: keys.rsa, nowS: now() })))).toBe('missing_identity');
    expect(await code(bearer(await sign({ sub: undefined, azp: 'web-app' }, { key: keys.rsa, nowS: now() })))).toBe(
      'missing_user',
    );
    expect(await code(bearer(await sign({ org_id: undefined }, { key: keys.rsa, nowS: now() })))).toBe('missing_org');
    expect(
      await code(
        bearer(await sign({ org_id: undefined, tenant: 'org-a' }, { key: keys.rsa, nowS: now() })),
        await fresh({ AUTH_ORG_CLAIM: 'tenant' }),
      ),
    ).toBe('ok');
  });

  it('token_service_account_unbound; a bound client acts as its agent', async () => {
    expect(
      await code(
        bearer(
          await sign({ sub: 'client-x', client_id: 'client-x', org_id: undefined }, { key: keys.rsa, nowS: now() }),
        ),
      ),
    ).toBe('token_service_account_unbound');
    const caller = await auth.authenticate(
      bearer(
        await sign({ sub: 'client-ag-1', client_id: 'client-ag-1', org_id: undefined }, { key: keys.rsa, nowS: now() }),
      ),
    );
    expect(caller).toEqual({
      kind: 'service_account',
      orgId: 'org-a',
      agentId: 'ag-1',
      workspaceId: 'ws-a-team',
      clientId: 'client-ag-1',
    });
  });

  it('unknown_account: subject or org not in the directory, or not matching', async () => {
    expect(await code(bearer(await sign({ sub: 'u-ghost' }, { key: keys.rsa, nowS: now() })))).toBe('unknown_account');
    expect(await code(bearer(await sign({ org_id: 'org-ghost' }, { key: keys.rsa, nowS: now() })))).toBe(
      'unknown_account',
    );
    expect(await code(bearer(await sign({ sub: 'u-b', org_id: 'org-a' }, { key: keys.rsa, nowS: now() })))).toBe(
      'unknown_account',
    );
  });

  it('account_suspended (403): a suspended user', async () => {
    expect(await code(bearer(await sign({ sub: 'u-susp' }, { key: keys.rsa, nowS: now() })))).toBe('account_suspended');
  });

  it('a valid user token of each key type yields the directory user', async () => {
    for (const [key, alg, kid] of [
      [keys.rsa, 'RS256', 'rsa-1'],
      [keys.ec, 'ES256', 'ec-1'],
      [keys.ed, 'EdDSA', 'ed-1'],
    ] as const) {
      expect(await auth.authenticate(bearer(await sign({}, { key, alg, kid, nowS: now() })))).toEqual({
        kind: 'user',
        orgId: 'org-a',
        userId: 'u-admin',
      });
    }
  });
});

describe('key set resilience', () => {
  it('auth_unavailable when the JWKS cannot be fetched and no key is cached', async () => {
    jwks.mode('fail');
    const a = await fresh();
    expect(await code(bearer(await sign({}, { key: keys.rsa, nowS: now() })), a)).toBe('auth_unavailable');
  });

  it('auth_unavailable when the endpoint hangs past the fetch timeout', async () => {
    jwks.mode('hang');
    const a = await fresh();
    const started = Date.now();
    expect(await code(bearer(await sign({}, { key: keys.rsa, nowS: now() })), a)).toBe('auth_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('keeps serving the last good keys while the endpoint fails, for AUTH_JWKS_STALE_S', async () => {
    const a = await fresh({ AUTH_JWKS_STALE_S: '3600' });
    expect(await code(bearer(await sign({}, { key: keys.rsa, nowS: now() })), a)).toBe('ok');
    jwks.mode('fail');
    clock += 30 * 60_000; // past the 10-minute max age: a refresh is tried and fails
    expect(await code(bearer(await sign({}, { key: keys.ec, alg: 'ES256', kid: 'ec-1', nowS: now() })), a)).toBe('ok');
    clock += 2 * 3600_000; // past max age + stale grace
    expect(await code(bearer(await sign({}, { key: keys.ed, alg: 'EdDSA', kid: 'ed-1', nowS: now() })), a)).toBe(
      'auth_unavailable',
    );
    jwks.mode('ok');
    clock += 31_000;
    expect(await code(bearer(await sign({}, { key: keys.ed, alg: 'EdDSA', kid: 'ed-1', nowS: now() })), a)).toBe('ok');
  });

  it('a flood of random kids causes at most one fetch per 30 s cooldown', async () => {
    const a = await fresh();
    expect(await code(bearer(await sign({}, { key: keys.rsa, nowS: now() })), a)).toBe('ok');
    const before = jwks.hits();
    for (let i = 0; i < 50; i++) {
      expect(await code(bearer(await sign({}, { key: keys.rsa, kid: `random-${i}`, nowS: now() })), a)).toBe(
        'unknown_key',
      );
      clock += 100;
    }
    expect(jwks.hits() - before).toBeLessThanOrEqual(1);
    clock += 30_000;
    await code(bearer(await sign({}, { key: keys.rsa, kid: 'random-after', nowS: now() })), a);
    expect(jwks.hits() - before).toBeLessThanOrEqual(2);
  });

  it('finds a key the issuer rotated in on the first unknown kid, then waits AUTH_JWKS_COOLDOWN_S between fetches', async () => {
    const { generateKeyPair, exportJWK } = await import('jose');
    const rotated = await generateKeyPair('RS256', { extractable: true });
    const rotatedJwk = { ...(await exportJWK(rotated.publicKey)), kid: 'rsa-2', alg: 'RS256', use: 'sig' };
    try {
      // Default cooldown (30 s): the key set was fetched just now, so the new kid waits for it.
      const a = await fresh();
      expect(await code(bearer(await sign({}, { key: keys.rsa, nowS: now() })), a)).toBe('ok');
      jwks.setKeys([...keys.publicJwks, rotatedJwk]);
      const token = () => sign({}, { key: rotated.privateKey, kid: 'rsa-2', nowS: now() });
      expect(await code(bearer(await token()), a)).toBe('unknown_key');
      clock += 30_000;
      expect(await code(bearer(await token()), a)).toBe('ok');
      // A shorter cooldown, configured: the rotated key is fetched on the first unknown kid.
      jwks.setKeys(keys.publicJwks);
      const b = await fresh({ AUTH_JWKS_COOLDOWN_S: '1' });
      expect(await code(bearer(await sign({}, { key: keys.rsa, nowS: now() })), b)).toBe('ok');
      jwks.setKeys([...keys.publicJwks, rotatedJwk]);
      clock += 1_000;
      const before = jwks.hits();
      expect(await code(bearer(await token()), b)).toBe('ok');
      expect(jwks.hits() - before).toBe(1);
    } finally {
      jwks.setKeys(keys.publicJwks);
    }
  });

  it('never follows jku or x5u, never trusts an embedded jwk or x5c', async () => {
    const evil = await serveJwks([]);
    const { generateKeyPair, exportJWK } = await import('jose');
    const attacker = await generateKeyPair('RS256', { extractable: true });
    const embedded = { ...(await exportJWK(attacker.publicKey)), kid: 'evil' };
    const headers = [{ jku: evil.url }, { x5u: evil.url }, { jwk: embedded }, { x5c: ['MIIB'] }];
    for (const header of headers) {
      const token = await sign({}, { key: attacker.privateKey, kid: 'evil', nowS: now(), header });
      expect(await code(bearer(token))).toBe('unknown_key');
      const withKnownKid = await sign({}, { key: attacker.privateKey, kid: 'rsa-1', nowS: now(), header });
      expect(await code(bearer(withKnownKid))).toBe('signature_invalid');
    }
    expect(evil.hits()).toBe(0);
    await evil.close();
  });

  it('treats kid injection strings as unknown keys', async () => {
    for (const kid of [
      '../../../etc/passwd',
      "' OR '1'='1",
      '${jndi:ldap://x}',
      '\u0000',
      'rsa-1 ',
      'a'.repeat(2000),
    ]) {
      expect(await code(bearer(await sign({}, { key: keys.rsa, kid, nowS: now() })))).toBe('unknown_key');
    }
  });
});

describe('tokens that never expire', () => {
  it('are rejected with token_rejected, whatever else they carry', async () => {
    expect(await code(bearer(await sign({ exp: undefined }, { key: keys.rsa, nowS: now() })))).toBe('token_rejected');
    expect(
      await code(
        bearer(
          await sign({ exp: undefined, nbf: now() - 10 }, { key: keys.ec, alg: 'ES256', kid: 'ec-1', nowS: now() }),
        ),
      ),
    ).toBe('token_rejected');
  });
});

describe('token cache', () => {
  it('never serves a cached result beyond the token expiry', async () => {
    const token = await sign({ exp: now() + 60 }, { key: keys.rsa, nowS: now() });
    expect(await code(bearer(token))).toBe('ok');
    clock += 59_000;
    expect(await code(bearer(token))).toBe('ok');
    clock += 32_000;
    expect(await code(bearer(token))).toBe('token_expired');
  });
});

describe('dev issuer', () => {
  it('is trusted outside production only', async () => {
    const { loadDevIssuer } = await import('../../src/auth/dev-issuer.ts');
    const dev = await loadDevIssuer(dir, { audience: AUDIENCE });
    const token = await dev.mint({ sub: 'u-admin', org: 'org-a' });
    expect(await code(bearer(token))).toBe('untrusted_issuer');
    clock = Date.now();
    const devAuth = await fresh({ NODE_ENV: 'development' });
    expect(await code(bearer(token), devAuth)).toBe('ok');
  });
});
