/** Real keys (RSA, EC P-256, Ed25519) and a JWKS served over loopback that a test can break. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export const ISSUER = 'https://idp.test';
export const AUDIENCE = 'gateway-api';

export interface Keys {
  rsa: CryptoKey;
  ec: CryptoKey;
  ed: CryptoKey;
  rsaPublicPem: string;
  publicJwks: JWK[];
}

export async function makeKeys(): Promise<Keys> {
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const ec = await generateKeyPair('ES256', { extractable: true });
  const ed = await generateKeyPair('EdDSA', { extractable: true, crv: 'Ed25519' });
  const publicJwks = [
    { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
    { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
    { ...(await exportJWK(ed.publicKey)), kid: 'ed-1', alg: 'EdDSA', use: 'sig' },
  ];
  const { createPublicKey } = await import('node:crypto');
  const rsaPublicPem = createPublicKey({ key: publicJwks[0] as never, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
  return { rsa: rsa.privateKey, ec: ec.privateKey, ed: ed.privateKey, rsaPublicPem, publicJwks };
}

export interface JwksServer {
  url: string;
  /** Requests served so far. */
  hits(): number;
  /** 'ok' serves the keys, 'fail' answers 500, 'hang' never answers. */
  mode(m: 'ok' | 'fail' | 'hang'): void;
  /** Serves these keys from now on (the issuer rotated them). */
  setKeys(next: JWK[]): void;
  close(): Promise<void>;
}

export async function serveJwks(initial: JWK[]): Promise<JwksServer> {
  let keys = initial;
  let hits = 0;
  let mode: 'ok' | 'fail' | 'hang' = 'ok';
  const server = http.createServer((_req, res) => {
    hits++;
    if (mode === 'hang') return;
    if (mode === 'fail') {
      res.writeHead(500).end('down');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    hits: () => hits,
    mode: (m) => {
      mode = m;
    },
    setKeys: (next) => {
      keys = next;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface SignOptions {
  key: CryptoKey | Uint8Array;
  alg?: string;
  kid?: string;
  header?: Record<string, unknown>;
  nowS: number;
}

/**
 * A signed token with sensible defaults (issuer, audience, user u-admin of org-a, 10 min); a claim
 * given as undefined removes the default.
 */
export async function sign(claims: Record<string, unknown>, o: SignOptions): Promise<string> {
  const merged: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'u-admin',
    org_id: 'org-a',
    iat: o.nowS,
    exp: o.nowS + 600,
    ...claims,
  };
  const payload = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)) as JWTPayload;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: o.alg ?? 'RS256', kid: o.kid ?? 'rsa-1', ...o.header })
    .sign(o.key);
}

export const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** RS256 over any header and payload (jose refuses to sign some of the shapes attacks need). */
export async function signRawRs256(header: object, payload: object, key: CryptoKey): Promise<string> {
  const { createSign, KeyObject } = await import('node:crypto');
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(KeyObject.from(key)).toString('base64url')}`;
}
