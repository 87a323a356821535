/**
 * The development issuer, trusted only outside production: an ES256 key pair kept in DATA_DIR
 * (file mode 0600), so `npm run token` and the service agree on keys across restarts.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

const DEV_ISSUER = 'urn:gateway:dev';
const DEV_AUDIENCE = 'agent-gateway';
const FILE = 'dev-issuer.jwk.json';
/** What link(2) answers on a file system that has no hard links. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

interface MintOptions {
  sub: string;
  org?: string;
  ttlSeconds?: number;
  /** Extra claims (e.g. `client_id` for a client-credentials token). */
  claims?: Record<string, unknown>;
}

export interface DevIssuer {
  readonly issuer: string;
  readonly audience: string;
  /** The public key (with kid and alg) for the verifier's local key set. */
  readonly publicJwk: JWK;
  mint(options: MintOptions): Promise<string>;
}

async function readOrCreate(file: string): Promise<JWK> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as JWK;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: `dev-${Date.now().toString(36)}` };
  await fs.mkdir(path.dirname(file), { recursive: true });
  // Written whole under a name of its own, then linked into place: another process starting at
  // the same time finds no file or a whole one, never one half written (which JSON.parse refused).
  const own = `${file}.${String(process.pid)}.${randomUUID()}`;
  await fs.writeFile(own, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' });
  try {
    await fs.link(own, file).catch(async (err: unknown) => {
      // A file system without hard links: created in place, as exclusive as the system allows.
      if (!NO_LINKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      await fs.writeFile(file, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' });
    });
    return jwk;
  } catch (err) {
    // Another process put its key there first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return JSON.parse(await fs.readFile(file, 'utf8')) as JWK;
    throw err;
  } finally {
    await fs.rm(own, { force: true });
  }
}

export async function loadDevIssuer(
  dataDir: string,
  options: { audience?: string; orgClaim?: string } = {},
): Promise<DevIssuer> {
  const jwk = await readOrCreate(path.join(dataDir, FILE));
  const key = (await importJWK(jwk, 'ES256')) as CryptoKey;
  const { d: _private, ...publicJwk } = jwk;
  const audience = options.audience ?? DEV_AUDIENCE;
  const orgClaim = options.orgClaim ?? 'org_id';
  return {
    issuer: DEV_ISSUER,
    audience,
    publicJwk,
    async mint({ sub, org, ttlSeconds = 3600, claims = {} }) {
      const payload: Record<string, unknown> = { ...claims };
      if (org !== undefined) payload[orgClaim] = org;
      return new SignJWT(payload)
        .setProtectedHeader({ alg: 'ES256', kid: jwk.kid as string, typ: 'JWT' })
        .setIssuer(DEV_ISSUER)
        .setAudience(audience)
        .setSubject(sub)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
        .sign(key);
    },
  };
}
