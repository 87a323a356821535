/**
 * The pieces under the authenticator, each against its contract: the key sets (a remote JWKS
 * fetched, kept, refreshed and served stale on a fake clock, counted at a real loopback endpoint),
 * which claims make a client-credentials token for each provider shape, and the development
 * issuer's key file and tokens.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientOfToken } from '../../src/auth/client-tokens.ts';
import { CLIENT_TOKEN_SHAPES, type ClientTokenShape } from '../../src/config.ts';
import { loadDevIssuer } from '../../src/auth/dev-issuer.ts';
import { RemoteKeySet, StaticKeySet } from '../../src/auth/key-set.ts';
import { ApiError } from '../../src/errors.ts';

const A: JWK = { kty: 'OKP', crv: 'Ed25519', x: 'a'.repeat(43), kid: 'a' };
const B: JWK = { kty: 'OKP', crv: 'Ed25519', x: 'b'.repeat(43), kid: 'b' };

describe('StaticKeySet', () => {
  it('finds the keys of a kid, or every key when the token names none', async () => {
    const set = new StaticKeySet([A, B]);
    expect(await set.find('a')).toEqual([A]);
    expect(await set.find('zz')).toEqual([]);
    expect(await set.find(undefined)).toEqual([A, B]);
  });
});

describe('RemoteKeySet', () => {
  let server: http.Server;
  let url: string;
  let hits = 0;
  let answer: { status: number; body: unknown } = { status: 200, body: { keys: [A] } };
  let clock = 1_000_000;
  const COOLDOWN = 1_000;
  const MAX_AGE = 10_000;
  const STALE = 5_000;
  let outcomes: string[] = [];
  const remote = () =>
    new RemoteKeySet(url, {
      cooldownMs: COOLDOWN,
      maxAgeMs: MAX_AGE,
      staleMs: STALE,
      now: () => clock,
      onFetch: (o) => outcomes.push(o),
    });
  const unavailable = async (set: RemoteKeySet, kid: string | undefined) => {
    const err = await set.find(kid).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      code: 'auth_unavailable',
      message: 'the signing keys of the issuer cannot be fetched',
    });
  };

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    hits = 0;
    clock = 1_000_000;
    outcomes = [];
    answer = { status: 200, body: { keys: [A, B] } };
  });

  it('fetches once, serves its copy until it is older than maxAgeMs, then fetches again', async () => {
    const set = remote();
    expect(await set.find('a')).toEqual([A]);
    expect(await set.find(undefined)).toEqual([A, B]);
    expect(hits).toBe(1);
    clock += COOLDOWN; // cooled down, still fresh: no fetch for a known kid
    expect(await set.find('a')).toEqual([A]);
    expect(hits).toBe(1);
    answer = { status: 200, body: { keys: [B] } }; // the issuer dropped A
    clock = 1_000_000 + MAX_AGE;
    expect(await set.find('a')).toEqual([A]);
    expect(hits).toBe(1);
    clock += 1;
    expect(await set.find('a')).toEqual([]);
    expect(hits).toBe(2);
    expect(outcomes).toEqual(['ok', 'ok']);
  });

  it('after a failed fetch, tries again only once the cooldown has passed', async () => {
    answer = { status: 500, body: { keys: [A] } }; // keys in the body do not make an error answer good
    const set = remote();
    await unavailable(set, 'a');
    expect(hits).toBe(1);
    clock += COOLDOWN - 1;
    await unavailable(set, 'a');
    expect(hits).toBe(1);
    clock += 1;
    await unavailable(set, 'a');
    expect(hits).toBe(2);
    answer = { status: 200, body: { keys: [A] } };
    clock += COOLDOWN;
    expect(await set.find('a')).toEqual([A]);
    expect(outcomes).toEqual(['error', 'error', 'ok']);
  });

  it('serves its last good copy for staleMs past maxAgeMs while the endpoint fails, not a millisecond more', async () => {
    const set = remote();
    expect(await set.find('a')).toEqual([A]);
    answer = { status: 503, body: {} };
    clock += MAX_AGE + STALE;
    expect(await set.find('a')).toEqual([A]);
    expect(hits).toBe(2);
    clock += 1;
    await unavailable(set, 'a');
    expect(hits).toBe(2);
  });

  it('keeps only the entries that are keys, and takes a JWKS without keys as a failure', async () => {
    answer = { status: 200, body: { keys: [null, 5, 'x', { kid: 'no-kty' }, { kty: 7, kid: 'bad' }, A] } };
    const set = remote();
    expect(await set.find(undefined)).toEqual([A]);
    answer = { status: 200, body: { keys: { a: A } } };
    await unavailable(remote(), 'a');
    expect(outcomes).toEqual(['ok', 'error']);
  });
});

describe('client-credentials tokens by provider shape', () => {
  const client = (claims: Record<string, unknown>, shapes: readonly ClientTokenShape[] = CLIENT_TOKEN_SHAPES) =>
    clientOfToken(claims, shapes);

  it('RFC 9068: client_id or azp equal to sub, non-empty strings only', () => {
    expect(client({ client_id: 'c', sub: 'c' })).toBe('c');
    expect(client({ azp: 'c', sub: 'c' })).toBe('c');
    expect(client({ client_id: 'c', sub: 'u-admin' })).toBeUndefined();
    expect(client({ client_id: '', sub: '' })).toBeUndefined();
    expect(client({ client_id: 5, sub: 5 })).toBeUndefined();
  });

  it('Auth0: gty client-credentials and sub <azp>@clients', () => {
    expect(client({ gty: 'client-credentials', azp: 'c', sub: 'c@clients' })).toBe('c');
    expect(client({ gty: 'client-credentials', azp: 'c', sub: 'u-admin' })).toBeUndefined();
    expect(client({ gty: 'password', azp: 'c', sub: 'c@clients' })).toBeUndefined();
    expect(client({ gty: 'client-credentials', azp: 'c', sub: 'c@clients' }, ['rfc9068'])).toBeUndefined();
  });

  it('Keycloak: service-account-<azp> with the client in client_id or clientId', () => {
    expect(client({ azp: 'c', client_id: 'c', preferred_username: 'service-account-c', sub: 'uuid' })).toBe('c');
    expect(client({ azp: 'c', clientId: 'c', preferred_username: 'service-account-c', sub: 'uuid' })).toBe('c');
    expect(client({ azp: 'c', client_id: 'c', preferred_username: 'alice', sub: 'uuid' })).toBeUndefined();
    expect(client({ azp: 'c', preferred_username: 'service-account-c', sub: 'uuid' })).toBeUndefined();
  });

  it('Entra ID: idtyp app, the client in azp or appid', () => {
    expect(client({ idtyp: 'app', azp: 'c', sub: 'oid' })).toBe('c');
    expect(client({ idtyp: 'app', appid: 'c', sub: 'oid' })).toBe('c');
    expect(client({ idtyp: 'app', azp: '', sub: 'oid' })).toBeUndefined();
    expect(client({ idtyp: 'app', azp: 7, sub: 'oid' })).toBeUndefined();
    expect(client({ idtyp: 'user', azp: 'c', sub: 'oid' })).toBeUndefined();
  });
});

describe('the development issuer', () => {
  const fresh = () => fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dev-issuer-'));

  it('keeps its key pair in DATA_DIR, readable by its owner only, and publishes the public half', async () => {
    const dir = fresh();
    const dev = await loadDevIssuer(dir);
    const file = path.join(dir, 'dev-issuer.jwk.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as JWK;
    expect(stored.d).toEqual(expect.any(String));
    expect(dev.publicJwk).not.toHaveProperty('d');
    expect(dev.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: stored.kid, x: stored.x });
    expect(dev.publicJwk.kid).toMatch(/^dev-[0-9a-z]+$/);
    expect((await loadDevIssuer(dir)).publicJwk).toEqual(dev.publicJwk);
  });

  it('two processes starting together agree on one key', async () => {
    const dir = fresh();
    const [a, b] = await Promise.all([loadDevIssuer(dir), loadDevIssuer(dir)]);
    expect(a.publicJwk).toEqual(b.publicJwk);
    const token = await b.mint({ sub: 'u-admin', org: 'org-a' });
    await expect(jwtVerify(token, createLocalJWKSet({ keys: [a.publicJwk] }))).resolves.toBeDefined();
  });

  it('mints tokens of its issuer and audience, with the org claim, extra claims and a lifetime', async () => {
    const dev = await loadDevIssuer(fresh(), { audience: 'aud-x', orgClaim: 'tenant' });
    const token = await dev.mint({
      sub: 'client-ag-1',
      org: 'org-a',
      ttlSeconds: 60,
      claims: { client_id: 'client-ag-1' },
    });
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: [dev.publicJwk] }), {
      issuer: 'urn:gateway:dev',
      audience: 'aud-x',
    });
    expect(payload).toMatchObject({ sub: 'client-ag-1', tenant: 'org-a', client_id: 'client-ag-1' });
    expect((payload.exp as number) - (payload.iat as number)).toBe(60);
    expect(Math.abs((payload.iat as number) - Date.now() / 1000)).toBeLessThan(3600);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: dev.publicJwk.kid, typ: 'JWT' });
    const plain = decodeJwt(await dev.mint({ sub: 'u-admin' }));
    expect(plain).not.toHaveProperty('tenant');
    expect(plain.aud).toBe('aud-x');
    expect((plain.exp as number) - (plain.iat as number)).toBe(3600);
  });
});
