/**
 * Verifies a compact JWS with jose and classifies every failure as DESIGN §6's table says, in its
 * order: cheap structural checks, algorithm, issuer (before any key fetch), key lookup, then
 * signature and claims. Returns the verified claims.
 */
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { ApiError } from '../errors.ts';
import type { KeySet } from './key-set.ts';

const MAX_TOKEN_BYTES = 8192;
const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const KNOWN_CRIT: string[] = [];

export interface VerifierOptions {
  /** Issuer -> the key set that signs its tokens. */
  issuers: Map<string, KeySet>;
  audience: string | undefined;
  algorithms: string[];
  clockToleranceS: number;
  now?: () => Date;
}

const KTY_OF_ALG: Record<string, { kty: string; crv?: string }> = {
  RS256: { kty: 'RSA' },
  RS384: { kty: 'RSA' },
  RS512: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
  PS384: { kty: 'RSA' },
  PS512: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: 'P-256' },
  ES384: { kty: 'EC', crv: 'P-384' },
  ES512: { kty: 'EC', crv: 'P-521' },
  EdDSA: { kty: 'OKP' },
  Ed25519: { kty: 'OKP', crv: 'Ed25519' },
};

function keyFits(key: JWK, alg: string): boolean {
  if (key.alg !== undefined && key.alg !== alg) return false;
  const want = KTY_OF_ALG[alg];
  if (want === undefined || key.kty !== want.kty) return false;
  return want.crv === undefined || key.crv === want.crv;
}

/** A key without kid matches the token's kid for the local key set (the caller already selected it). */
function withKid(key: JWK, kid: string | undefined): JWK {
  const id = key.kid ?? kid;
  return id === undefined ? key : { ...key, kid: id };
}

function malformed(detail: string): ApiError {
  return new ApiError('token_malformed', detail);
}

export async function verifyJwt(token: string, options: VerifierOptions): Promise<JWTPayload> {
  if (Buffer.byteLength(token) > MAX_TOKEN_BYTES) throw malformed('the token is larger than 8 KiB');
  if (token.split('.').length === 5) throw malformed('encrypted tokens (JWE) are not accepted');
  if (!COMPACT.test(token)) throw malformed('the token is not a compact JWS');
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch {
    throw malformed('the token header or payload is not base64url JSON');
  }
  const alg = header.alg;
  if (typeof alg !== 'string' || !options.algorithms.includes(alg)) {
    throw new ApiError(
      'alg_not_allowed',
      `algorithm ${typeof alg === 'string' ? alg.slice(0, 20) : 'missing'} is not allowed`,
    );
  }
  if (typeof claims.iss !== 'string' || !options.issuers.has(claims.iss)) {
    throw new ApiError('untrusted_issuer', 'the token issuer is not trusted');
  }
  if (header.crit !== undefined && (!Array.isArray(header.crit) || header.crit.some((c) => !KNOWN_CRIT.includes(c)))) {
    throw new ApiError('token_rejected', 'the token has unsupported critical header parameters');
  }
  if (header.typ !== undefined && !/^(application\/)?(at\+)?jwt$/i.test(header.typ)) {
    throw new ApiError('token_rejected', 'the token type is not a JWT');
  }
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const candidates = await (options.issuers.get(claims.iss) as KeySet).find(kid);
  if (candidates.length === 0) throw new ApiError('unknown_key', 'no key of the issuer matches the token kid');
  const fitting = candidates.filter((k) => keyFits(k, alg));
  if (fitting.length === 0) throw new ApiError('alg_mismatch', 'the key for this kid does not use the token algorithm');

  const now = options.now?.() ?? new Date();
  try {
    const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: fitting.map((k) => withKid(k, kid)) }), {
      algorithms: [alg],
      clockTolerance: options.clockToleranceS,
      currentDate: now,
      ...(options.audience !== undefined ? { audience: options.audience } : {}),
    });
    const skewed = now.getTime() / 1000 + options.clockToleranceS;
    if (typeof payload.iat === 'number' && payload.iat > skewed)
      throw new ApiError('token_not_yet_valid', 'the token was issued in the future');
    if (options.audience !== undefined && payload.aud === undefined)
      throw new ApiError('audience_mismatch', 'the token has no audience');
    // A token that never expires cannot be revoked by time (DESIGN §12).
    if (payload.exp === undefined)
      throw new ApiError('token_rejected', 'the token has no exp claim; tokens must expire');
    return payload;
  } catch (err) {
    throw classify(err);
  }
}

/**
 * jose errors are told apart by their `code` (e.g. ERR_JWT_EXPIRED), not by `instanceof`: two copies of
 * jose in one process (a dependency bringing its own) would make every `instanceof` check fail.
 */
interface JoseFailure {
  code: string;
  claim?: unknown;
  reason?: unknown;
}

function joseFailure(err: unknown): JoseFailure | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const { code } = err;
  return typeof code === 'string' && code.startsWith('ERR_J') ? (err as JoseFailure) : undefined;
}

function classify(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const failure = joseFailure(err);
  switch (failure?.code) {
    case 'ERR_JWT_EXPIRED':
      return new ApiError('token_expired', 'the token has expired');
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return new ApiError('signature_invalid', 'the token signature does not verify');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return classifyClaim(String(failure.claim), String(failure.reason));
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return new ApiError('unknown_key', 'no key matches the token');
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return new ApiError('alg_not_allowed', 'the token algorithm is not allowed');
    case 'ERR_JWT_INVALID':
    case 'ERR_JWS_INVALID':
      return malformed('the token is not a valid JWT');
    case 'ERR_JOSE_NOT_SUPPORTED':
      return new ApiError('token_rejected', 'the token uses an unsupported feature');
    default:
      return new ApiError('token_rejected', 'the token was rejected');
  }
}

function classifyClaim(claim: string, reason: string): ApiError {
  if (claim === 'aud') return new ApiError('audience_mismatch', 'the token audience is missing or not accepted');
  if (reason === 'invalid') return new ApiError('token_rejected', `the token claim ${claim} has an invalid type`);
  if (claim === 'nbf' || claim === 'iat') return new ApiError('token_not_yet_valid', 'the token is not valid yet');
  if (claim === 'exp') return new ApiError('token_expired', 'the token expiry is invalid');
  return new ApiError('token_rejected', `the token claim ${claim} is invalid`);
}
