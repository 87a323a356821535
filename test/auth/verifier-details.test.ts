/**
 * What a caller is told when a credential is refused (DESIGN §6): the code and the detail of every
 * refusal, at the edges of each rule (token size, Bearer header shape, clock tolerance, API key
 * expiry, keys of a JWKS file that do not fit the token), the token cache's bounds, and the
 * authenticator's options. Real keys, a real SQLite directory; the clock is frozen, never slept.
 */
import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAuthenticator, type AuthenticatorOptions } from '../../src/auth/authenticator.ts';
import type { Authenticator } from '../../src/auth/caller.ts';
import { loadConfig } from '../../src/config.ts';
import { ApiError } from '../../src/errors.ts';
import { parseBundle } from '../../src/bundle/parse.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { SqliteRegistryStore } from '../../src/store/sqlite/registry-store.ts';
import { TEST_API_KEY, addSuspendedOrg, smallBundle } from '../fixtures/small-bundle.ts';
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
const nowS = () => Math.floor(clock / 1000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-auth-details-'));
const NOW_KEY = 'agk_expiresnow00000000000000000000';
const LATER_KEY = 'agk_expireslater000000000000000000';
const SUSPENDED_KEY = 'agk_suspendedorg00000000000000000';

let keys: Keys;
let jwks: JwksServer;
let store: SqliteRegistryStore;
/** What the directory pretends is gone (the store as another process may have changed it). */
let gone: 'agent' | 'workspace' | 'org' | 'user' | null = null;
let registry: RegistryStore;

/** An RSA key of its own (its private half signs, its public JWK goes into the JWKS file). */
interface FileKey {
  privateKey: CryptoKey;
  jwk: JWK;
}
const fileKeys = {} as Record<'plain' | 'r384' | 'enc' | 'ec' | 'p384' | 'weak', FileKey>;
/** The private half of the 1024-bit key (jose will not sign with it: node's crypto does). */
let weakKey: KeyObject;
let jwksFile: string;

async function rsaKey(jwk: Partial<JWK>): Promise<FileKey> {
  const pair = await generateKeyPair('RS256', { extractable: true });
  return { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), ...jwk } };
}

function bundle() {
  const b = smallBundle();
  const { repo_id: _repo, ...ag2 } = b.artifacts.find((a) => a.id === 'ag-2') as Record<string, unknown>;
  const agent = (id: string, ws: string, key: string, expires: string) =>
    ({
      ...ag2,
      id,
      name: id,
      display_name: id,
      workspace_id: ws,
      content_hash_hex: id.replace(/[^0-9a-f]/g, 'a').padEnd(64, '0'),
      identity: { client_id: `client-${id}`, credential_kind: 'api_key', api_key: key, expires_at: expires },
    }) as never;
  b.artifacts.push(
    agent('ag-now', 'ws-a-sub', NOW_KEY, new Date(T0 * 1000).toISOString()),
    agent('ag-later', 'ws-a-sub', LATER_KEY, new Date(T0 * 1000 + 1000).toISOString()),
    agent('ag-s', 'ws-s', SUSPENDED_KEY, '2099-01-01T00:00:00Z'),
  );
  addSuspendedOrg(b);
  return b;
}

beforeAll(async () => {
  keys = await makeKeys();
  jwks = await serveJwks(keys.publicJwks);
  store = new SqliteRegistryStore(path.join(dir, 'registry.sqlite'));
  await store.importBundle(parseBundle(bundle()));
  registry = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const missing =
        (gone === 'agent' && prop === 'getArtifacts') ||
        (gone === 'workspace' && prop === 'getWorkspaces') ||
        (gone === 'org' && prop === 'getOrganizations') ||
        (gone === 'user' && prop === 'getUsers');
      return missing ? async () => [] : value.bind(target);
    },
  });
  // A JWKS file: an RSA key without alg, one declared RS384, one for encryption, an EC P-256 key and an
  // EC P-384 key without alg, and a 1024-bit RSA key (too weak to verify with).
  const ec = await generateKeyPair('ES256', { extractable: true });
  const ec384 = await generateKeyPair('ES384', { extractable: true });
  const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
  fileKeys.plain = await rsaKey({ kid: 'plain' });
  fileKeys.r384 = await rsaKey({ kid: 'r384', alg: 'RS384' });
  fileKeys.enc = await rsaKey({ kid: 'enc', use: 'enc' });
  fileKeys.ec = { privateKey: ec.privateKey, jwk: { ...(await exportJWK(ec.publicKey)), kid: 'ec-plain' } };
  fileKeys.p384 = { privateKey: ec384.privateKey, jwk: { ...(await exportJWK(ec384.publicKey)), kid: 'p384' } };
  weakKey = weak.privateKey;
  fileKeys.weak = {
    privateKey: fileKeys.plain.privateKey,
    jwk: { ...(weak.publicKey.export({ format: 'jwk' }) as JWK), kid: 'weak' },
  };
  jwksFile = path.join(dir, 'jwks.json');
  fs.writeFileSync(jwksFile, JSON.stringify({ keys: Object.values(fileKeys).map((k) => k.jwk) }));
});
afterAll(async () => {
  await jwks.close();
  await store.close();
});

async function fresh(env: Record<string, string> = {}, opts: AuthenticatorOptions = {}): Promise<Authenticator> {
  const config = loadConfig({
    NODE_ENV: 'production',
    DATA_DIR: dir,
    AUTH_JWKS_URL: jwks.url,
    AUTH_ISSUERS: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    ...env,
  });
  return createAuthenticator(config, registry, { now: () => clock, ...opts });
}
let auth: Authenticator;
beforeEach(async () => {
  clock = T0 * 1000;
  gone = null;
  jwks.mode('ok');
  auth = await fresh();
});

/** `code: detail` of the refusal, or 'ok'. */
async function why(header: string | undefined, a: Authenticator = auth): Promise<string> {
  try {
    await a.authenticate(header);
    return 'ok';
  } catch (err) {
    if (err instanceof ApiError) return `${err.code}: ${err.message}`;
    throw err;
  }
}
const bearer = (t: string) => `Bearer ${t}`;
const rsaToken = (claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
  sign(claims, { key: keys.rsa, nowS: nowS(), header });
const rawClaims = () => ({
  iss: ISSUER,
  aud: AUDIENCE,
  sub: 'u-admin',
  org_id: 'org-a',
  iat: nowS(),
  exp: nowS() + 600,
});

describe('the Authorization header', () => {
  it('needs the Bearer scheme at its start, then the credential, spaces around it ignored', async () => {
    const token = await rsaToken();
    const missing = 'token_missing: send Authorization: Bearer <token>';
    expect(await why(undefined)).toBe(missing);
    expect(await why(`Token Bearer ${token}`)).toBe(missing);
    expect(await why(`Bearer ${token}\nX-Other: 1`)).toBe(missing);
    expect(await why(`Bearer    ${token}`)).toBe('ok');
    expect(await why(`Bearer ${token}   `)).toBe('ok');
    expect(await why(bearer('not-a-key!'))).toBe('token_malformed: the credential is neither a JWT nor an API key');
  });
});

describe('the shape of a JWT', () => {
  it('is refused over 8 KiB, as JWE, when not compact, or not base64url JSON', async () => {
    const header = b64({ alg: 'RS256', kid: 'rsa-1' });
    const prefix = `${header}.${b64({ iss: 'https://elsewhere.test' })}.`;
    const sized = (bytes: number) => `${prefix}${'s'.repeat(bytes - prefix.length)}`;
    expect(sized(8192)).toHaveLength(8192);
    expect(await why(bearer(sized(8192)))).toBe('untrusted_issuer: the token issuer is not trusted');
    expect(await why(bearer(sized(8193)))).toBe('token_malformed: the token is larger than 8 KiB');
    expect(await why(bearer('a.b.c.d.e'))).toBe('token_malformed: encrypted tokens (JWE) are not accepted');
    expect(await why(bearer('a.b'))).toBe('token_malformed: the token is not a compact JWS');
    expect(await why(bearer(`${b64('{')}.${b64('{}')}.sig`))).toBe(
      'token_malformed: the token header or payload is not base64url JSON',
    );
  });

  it('names the algorithm it does not allow (20 characters at most), or says it is missing', async () => {
    const payload = b64({ iss: ISSUER });
    expect(await why(bearer(`${b64({ alg: 'none', kid: 'rsa-1' })}.${payload}.`))).toBe(
      'alg_not_allowed: algorithm none is not allowed',
    );
    expect(await why(bearer(`${b64({ alg: 'X'.repeat(50) })}.${payload}.`))).toBe(
      `alg_not_allowed: algorithm ${'X'.repeat(20)} is not allowed`,
    );
    expect(await why(bearer(`${b64({ kid: 'rsa-1' })}.${payload}.`))).toBe(
      'alg_not_allowed: algorithm missing is not allowed',
    );
    expect(await why(bearer(`${b64({ alg: 256 })}.${payload}.`))).toBe(
      'alg_not_allowed: algorithm missing is not allowed',
    );
  });

  it('refuses critical header parameters it does not know, and a crit jose would refuse', async () => {
    const claims = rawClaims();
    const unsupported = 'token_rejected: the token has unsupported critical header parameters';
    for (const crit of [['x-magic'], ['b64'], 'x-magic'])
      expect(
        await why(bearer(await signRawRs256({ alg: 'RS256', kid: 'rsa-1', crit, 'x-magic': 1 }, claims, keys.rsa))),
      ).toBe(unsupported);
    expect(await why(bearer(await signRawRs256({ alg: 'RS256', kid: 'rsa-1', crit: [] }, claims, keys.rsa)))).toBe(
      'token_malformed: the token is not a valid JWT',
    );
  });

  it('accepts the JWT media types only', async () => {
    for (const typ of ['JWT', 'jwt', 'at+jwt', 'application/jwt', 'application/at+JWT'])
      expect(await why(bearer(await rsaToken({}, { typ })))).toBe('ok');
    for (const typ of ['dpop+jwt', 'jwt+dpop', 'JWTs', 'application/json'])
      expect(await why(bearer(await rsaToken({}, { typ })))).toBe('token_rejected: the token type is not a JWT');
  });
});

describe('keys', () => {
  it('an unknown kid, a key of another algorithm, a kid that is not a string', async () => {
    expect(await why(bearer(await sign({}, { key: keys.rsa, kid: 'rotated-away', nowS: nowS() })))).toBe(
      'unknown_key: no key of the issuer matches the token kid',
    );
    expect(await why(bearer(await sign({}, { key: keys.ec, alg: 'ES256', kid: 'rsa-1', nowS: nowS() })))).toBe(
      'alg_mismatch: the key for this kid does not use the token algorithm',
    );
    // A kid that is not a string selects no key by kid; jose then finds none with that kid.
    expect(await why(bearer(await signRawRs256({ alg: 'RS256', kid: 5 }, rawClaims(), keys.rsa)))).toBe(
      'unknown_key: no key matches the token',
    );
  });

  it('from a JWKS file: a key fits by its declared alg, else by its type and curve', async () => {
    const a = await fresh({ AUTH_JWKS_URL: '', AUTH_JWKS_FILE: jwksFile });
    const withKey = (k: FileKey, alg: string, kid = k.jwk.kid) =>
      sign({}, { key: k.privateKey, alg, ...(kid !== undefined ? { kid } : {}), nowS: nowS() });
    const { plain, r384, enc, ec } = fileKeys;
    const mismatch = 'alg_mismatch: the key for this kid does not use the token algorithm';
    expect(await why(bearer(await withKey(plain, 'RS256')), a)).toBe('ok');
    expect(await why(bearer(await withKey(r384, 'RS256')), a)).toBe(mismatch);
    expect(await why(bearer(await withKey(plain, 'RS256', 'ec-plain')), a)).toBe(mismatch);
    expect(await why(bearer(await withKey(ec, 'ES256', 'p384')), a)).toBe(mismatch);
    expect(await why(bearer(await withKey(ec, 'ES256')), a)).toBe('ok');
    // A key for encryption is no signing key.
    expect(await why(bearer(await withKey(enc, 'RS256')), a)).toBe('unknown_key: no key matches the token');
    // A key too weak to verify with refuses the token, it does not break the request.
    const input = `${b64({ alg: 'RS256', kid: 'weak' })}.${b64(rawClaims())}`;
    const weakToken = `${input}.${createSign('RSA-SHA256').update(input).sign(weakKey).toString('base64url')}`;
    expect(await why(bearer(weakToken), a)).toBe('token_rejected: the token was rejected');
    expect(await why(bearer(await withKey(plain, 'RS256', 'nope')), a)).toBe(
      'unknown_key: no key of the issuer matches the token kid',
    );
    // Without kid, every key of the file is a candidate: here, the only one.
    const noKid = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'u-admin', org_id: 'org-a', exp: nowS() + 600 })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(plain.privateKey);
    const single = path.join(dir, 'jwks-single.json');
    fs.writeFileSync(single, JSON.stringify({ keys: [plain.jwk] }));
    expect(await why(bearer(noKid), await fresh({ AUTH_JWKS_URL: '', AUTH_JWKS_FILE: single }))).toBe('ok');
  });
});

describe('claims', () => {
  it('says which claim failed, at the edges of the clock tolerance', async () => {
    expect(await why(bearer(await rsaToken({ exp: nowS() - 31, iat: nowS() - 700 })))).toBe(
      'token_expired: the token has expired',
    );
    expect(await why(bearer(await rsaToken({ nbf: nowS() + 31 })))).toBe(
      'token_not_yet_valid: the token is not valid yet',
    );
    expect(await why(bearer(await rsaToken({ iat: nowS() + 30 })))).toBe('ok');
    expect(await why(bearer(await rsaToken({ iat: nowS() + 31 })))).toBe(
      'token_not_yet_valid: the token was issued in the future',
    );
    expect(await why(bearer(await rsaToken({ aud: 'someone-else' })))).toBe(
      'audience_mismatch: the token audience is missing or not accepted',
    );
    expect(await why(bearer(await rsaToken({ aud: undefined })))).toBe(
      'audience_mismatch: the token audience is missing or not accepted',
    );
    expect(
      await why(bearer(await signRawRs256({ alg: 'RS256', kid: 'rsa-1' }, { ...rawClaims(), exp: 'soon' }, keys.rsa))),
    ).toBe('token_rejected: the token claim exp has an invalid type');
    expect(await why(bearer(await rsaToken({ exp: undefined })))).toBe(
      'token_rejected: the token has no exp claim; tokens must expire',
    );
    const good = await rsaToken();
    const [h, , s] = good.split('.');
    expect(await why(bearer(`${h}.${b64({ ...rawClaims(), sub: 'u-b', org_id: 'org-b' })}.${s}`))).toBe(
      'signature_invalid: the token signature does not verify',
    );
  });

  it('names the missing identity, user or organization; empty strings are missing', async () => {
    const t = (claims: Record<string, unknown>) => rsaToken(claims).then(bearer);
    const noIdentity = 'missing_identity: the token names no user and no client';
    expect(await why(await t({ sub: undefined }))).toBe(noIdentity);
    expect(await why(await t({ sub: '' }))).toBe(noIdentity);
    expect(await why(await t({ sub: undefined, client_id: '' }))).toBe(noIdentity);
    expect(await why(await t({ sub: undefined, azp: 'web-app' }))).toBe('missing_user: the token has no subject');
    expect(await why(await t({ org_id: undefined }))).toBe('missing_org: the token has no org_id claim');
    expect(await why(await t({ org_id: '' }))).toBe('missing_org: the token has no org_id claim');
    expect(await why(await t({ sub: 'c', client_id: 'c' }))).toBe(
      'token_service_account_unbound: the client is bound to no active agent identity',
    );
    expect(await why(await t({ sub: 'u-ghost' }))).toBe(
      'unknown_account: the user or organization is not in the directory',
    );
    expect(await why(await t({ sub: 'u-susp' }))).toBe('account_suspended: the account is suspended');
  });
});

describe('API keys', () => {
  it('expire at their expires_at, to the millisecond', async () => {
    const invalid = 'invalid_api_key: the API key is unknown, expired or revoked';
    expect(await why(bearer(NOW_KEY))).toBe(invalid);
    expect(await why(bearer(LATER_KEY))).toBe('ok');
    clock += 1000;
    expect(await why(bearer(LATER_KEY))).toBe(invalid);
  });

  it('a key the service was told to refuse is refused, whatever the directory says', async () => {
    const a = await fresh({}, { refusedApiKeys: [TEST_API_KEY] });
    expect(await why(bearer(TEST_API_KEY), a)).toBe('invalid_api_key: the API key is unknown, expired or revoked');
    expect(await why(bearer(TEST_API_KEY))).toBe('ok');
  });

  it('acts as its agent only while the agent, its workspace and its organization are there and active', async () => {
    expect(await why(bearer(SUSPENDED_KEY))).toBe('account_suspended: the organization is suspended');
    gone = 'agent';
    expect(await why(bearer(TEST_API_KEY))).toBe('token_service_account_unbound: the client is bound to no agent');
    gone = 'workspace';
    expect(await why(bearer(TEST_API_KEY))).toBe('unknown_account: the agent workspace is unknown');
    gone = 'org';
    expect(await why(bearer(TEST_API_KEY))).toBe('unknown_account: the agent organization is unknown');
  });
});

describe('the token cache', () => {
  it('serves a verified token for at most 60 s while the directory changes', async () => {
    const token = bearer(await rsaToken());
    expect(await why(token)).toBe('ok');
    gone = 'user';
    clock += 59_999;
    expect(await why(token)).toBe('ok');
    clock += 1;
    expect(await why(token)).toBe('unknown_account: the user or organization is not in the directory');
  });

  it('keeps earlier tokens when a new one is verified', async () => {
    const first = bearer(await rsaToken());
    const second = bearer(await rsaToken({ jti: 'second' }));
    expect(await why(first)).toBe('ok');
    expect(await why(second)).toBe('ok');
    gone = 'user';
    expect(await why(first)).toBe('ok');
    expect(await why(second)).toBe('ok');
  });
});

describe('options', () => {
  it('reports each JWKS fetch', async () => {
    const fetches: string[] = [];
    const a = await fresh({}, { onJwksFetch: (o) => fetches.push(o) });
    expect(await why(bearer(await rsaToken()), a)).toBe('ok');
    expect(fetches).toEqual(['ok']);
    jwks.mode('fail');
    const b = await fresh({}, { onJwksFetch: (o) => fetches.push(o) });
    expect(await why(bearer(await rsaToken()), b)).toBe(
      'auth_unavailable: the signing keys of the issuer cannot be fetched',
    );
    expect(fetches).toEqual(['ok', 'error']);
  });

  it('outside production, the dev issuer sets the audience when none is configured', async () => {
    clock = Date.now();
    const devDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-auth-dev-'));
    const a = await createAuthenticator(loadConfig({ NODE_ENV: 'development', DATA_DIR: devDir }), registry, {
      now: () => clock,
    });
    const jwk = JSON.parse(fs.readFileSync(path.join(devDir, 'dev-issuer.jwk.json'), 'utf8')) as JWK;
    const key = (await importJWK(jwk, 'ES256')) as CryptoKey;
    const token = (aud: string) =>
      new SignJWT({ org_id: 'org-a' })
        .setProtectedHeader({ alg: 'ES256', kid: jwk.kid as string })
        .setIssuer('urn:gateway:dev')
        .setAudience(aud)
        .setSubject('u-admin')
        .setExpirationTime(nowS() + 600)
        .sign(key);
    expect(await why(bearer(await token('agent-gateway')), a)).toBe('ok');
    expect(await why(bearer(await token('elsewhere')), a)).toBe(
      'audience_mismatch: the token audience is missing or not accepted',
    );
  });
});
