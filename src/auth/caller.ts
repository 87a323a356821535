/**
 * The request identity: who is calling, as established by authentication. Everything after
 * authentication (authorization, handlers, loaders) works from a Caller only.
 */
export type Caller = UserCaller | ServiceAccountCaller;

interface UserCaller {
  kind: 'user';
  orgId: string;
  userId: string;
}

/** An agent acting through its identity (client-credentials token or API key). */
interface ServiceAccountCaller {
  kind: 'service_account';
  orgId: string;
  agentId: string;
  /** The agent's workspace: the one a service account reads and writes. */
  workspaceId: string;
  clientId: string;
}

/**
 * Turns the raw `Authorization` header into a Caller or throws an ApiError with a 401/403/503
 * code of the catalogue.
 */
export interface Authenticator {
  authenticate(authorization: string | undefined): Promise<Caller>;
  close?(): Promise<void>;
}

/** Stable string for per-caller keys (rate limits, caches). */
export function callerKey(caller: Caller): string {
  return caller.kind === 'user' ? `u:${caller.orgId}:${caller.userId}` : `a:${caller.orgId}:${caller.agentId}`;
}
