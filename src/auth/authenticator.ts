/**
 * The service's Authenticator (DESIGN §6): bearer credential -> Caller.
 * - no dot: an API key of an agent identity, looked up by SHA-256 hash;
 * - otherwise a JWT, verified by jwt-verifier.ts; `client_id`/`azp` equal to `sub` makes it a
 *   client-credentials token acting as the agent bound to that client, else a user token.
 * Verified results are cached by token hash, never beyond the token's `exp`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import type { JWK, JWTPayload } from 'jose';
import type { Config } from '../config.ts';
import type { Identity } from '../domain/types.ts';
import { ApiError } from '../errors.ts';
import type { RegistryStore } from '../store/registry-port.ts';
import type { Authenticator, Caller } from './caller.ts';
import { loadDevIssuer } from './dev-issuer.ts';
import { RemoteKeySet, StaticKeySet, type KeySet } from './key-set.ts';
import { verifyJwt, type VerifierOptions } from './jwt-verifier.ts';
import { hashApiKey } from '../shared/api-key.ts';
import { clientOfToken } from './client-tokens.ts';

const API_KEY = /^[A-Za-z0-9_-]{16,256}$/;
const CACHE_MAX = 10_000;

export interface AuthenticatorOptions {
  now?: () => number;
  onJwksFetch?: (outcome: 'ok' | 'error') => void;
  /**
   * API keys refused whatever the store says: in production, the demo data set's keys, which anyone
   * can read in the source (DESIGN §12).
   */
  refusedApiKeys?: readonly string[];
}

export async function createAuthenticator(
  config: Config,
  registry: RegistryStore,
  opts: AuthenticatorOptions = {},
): Promise<Authenticator> {
  const now = opts.now ?? Date.now;
  const auth = config.auth;
  const issuers = new Map<string, KeySet>();
  const configured: KeySet[] = [];
  if (auth.jwksFile !== undefined) {
    const file = JSON.parse(await fs.readFile(auth.jwksFile, 'utf8')) as { keys: JWK[] };
    configured.push(new StaticKeySet(file.keys));
  }
  if (auth.jwksUrl !== undefined) {
    configured.push(
      new RemoteKeySet(auth.jwksUrl, {
        staleMs: auth.jwksStaleS * 1000,
        cooldownMs: auth.jwksCooldownS * 1000,
        now,
        ...(opts.onJwksFetch ? { onFetch: opts.onJwksFetch } : {}),
      }),
    );
  }
  const union: KeySet = {
    async find(kid) {
      const found: JWK[] = [];
      for (const set of configured) found.push(...(await set.find(kid)));
      return found;
    },
  };
  for (const iss of auth.issuers) issuers.set(iss, union);
  let audience = auth.audience;
  if (auth.devIssuer) {
    const dev = await loadDevIssuer(config.dataDir, { ...(audience ? { audience } : {}), orgClaim: auth.orgClaim });
    issuers.set(dev.issuer, new StaticKeySet([dev.publicJwk]));
    audience ??= dev.audience;
  }
  const verifier: VerifierOptions = {
    issuers,
    audience,
    algorithms: auth.algorithms,
    clockToleranceS: auth.clockToleranceS,
    now: () => new Date(now()),
  };
  const cache = new Map<string, { caller: Caller; expMs: number }>();
  const refused = new Set((opts.refusedApiKeys ?? []).map(hashApiKey));

  const expired = (identity: Identity) => identity.expires_at !== undefined && Date.parse(identity.expires_at) <= now();

  async function fromApiKey(key: string): Promise<Caller> {
    const hash = hashApiKey(key);
    if (refused.has(hash)) throw new ApiError('invalid_api_key', 'the API key is unknown, expired or revoked');
    const identity = await registry.findIdentityByApiKeyHash(hash);
    if (identity === null || identity.revoked === true || expired(identity))
      throw new ApiError('invalid_api_key', 'the API key is unknown, expired or revoked');
    return serviceAccount(identity.agent_id, identity.client_id);
  }

  async function serviceAccount(agentId: string, clientId: string): Promise<Caller> {
    const [agent] = await registry.getArtifacts([agentId]);
    if (agent === undefined) throw new ApiError('token_service_account_unbound', 'the client is bound to no agent');
    const [ws] = await registry.getWorkspaces([agent.workspace_id]);
    if (ws === undefined) throw new ApiError('unknown_account', 'the agent workspace is unknown');
    const [org] = await registry.getOrganizations([ws.org_id]);
    if (org === undefined) throw new ApiError('unknown_account', 'the agent organization is unknown');
    if (org.status === 'suspended') throw new ApiError('account_suspended', 'the organization is suspended');
    return { kind: 'service_account', orgId: org.id, agentId, workspaceId: agent.workspace_id, clientId };
  }

  async function fromClaims(claims: JWTPayload): Promise<Caller> {
    const sub = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined;
    const anyClient = [claims.client_id, claims.azp].find((c): c is string => typeof c === 'string' && c !== '');
    if (sub === undefined && anyClient === undefined)
      throw new ApiError('missing_identity', 'the token names no user and no client');
    const client = clientOfToken(claims, auth.clientTokenShapes);
    if (client !== undefined) {
      const identity = await registry.findIdentityByClientId(client);
      // A revoked or expired identity binds its client no more than its API key (fromApiKey).
      if (identity === null || identity.revoked === true || expired(identity))
        throw new ApiError('token_service_account_unbound', 'the client is bound to no active agent identity');
      return serviceAccount(identity.agent_id, client);
    }
    if (sub === undefined) throw new ApiError('missing_user', 'the token has no subject');
    const orgId = claims[auth.orgClaim];
    if (typeof orgId !== 'string' || orgId === '')
      throw new ApiError('missing_org', `the token has no ${auth.orgClaim} claim`);
    const [[user], [org]] = await Promise.all([registry.getUsers([sub]), registry.getOrganizations([orgId])]);
    if (user === undefined || org === undefined || user.org_id !== org.id)
      throw new ApiError('unknown_account', 'the user or organization is not in the directory');
    if (org.status === 'suspended' || user.status === 'suspended')
      throw new ApiError('account_suspended', 'the account is suspended');
    return { kind: 'user', orgId: org.id, userId: user.id };
  }

  return {
    async authenticate(header) {
      const m = header === undefined ? null : /^Bearer +(\S.*)$/i.exec(header);
      if (m === null) throw new ApiError('token_missing', 'send Authorization: Bearer <token>');
      const token = (m[1] as string).trim();
      if (!token.includes('.')) {
        if (!API_KEY.test(token))
          throw new ApiError('token_malformed', 'the credential is neither a JWT nor an API key');
        return fromApiKey(token);
      }
      const key = createHash('sha256').update(token).digest('hex'); // the cache never keeps a token
      const hit = cache.get(key);
      if (hit !== undefined && hit.expMs > now()) return hit.caller;
      const claims = await verifyJwt(token, verifier);
      const caller = await fromClaims(claims);
      if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
      cache.set(key, { caller, expMs: Math.min((claims.exp as number) * 1000, now() + 60_000) });
      return caller;
    },
  };
}
