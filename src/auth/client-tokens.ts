/**
 * Which JWTs are client-credentials (service account) tokens, and of which client. DESIGN §6 names
 * RFC 9068's shape (`client_id` or `azp` equal to `sub`); identity providers issue others, which would
 * otherwise be read as user tokens and fail with `missing_org`. Each shape is recognised only when it
 * is enabled (`AUTH_CLIENT_TOKEN_SHAPES`, all by default), and only in tokens of a trusted issuer.
 */
import type { JWTPayload } from 'jose';
import type { ClientTokenShape } from '../config.ts';

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Each shape: the client a token of that shape was issued to, or undefined when it is not of it. */
const SHAPES: Record<ClientTokenShape, (claims: JWTPayload) => string | undefined> = {
  // RFC 9068 §2.2: a client-credentials token's `sub` is the client itself.
  rfc9068: (c) => {
    const client = text(c.client_id) ?? text(c.azp);
    return client !== undefined && client === text(c.sub) ? client : undefined;
  },
  // Auth0 machine-to-machine tokens: `gty: client-credentials`, `sub: <client>@clients`, `azp: <client>`.
  auth0: (c) => {
    const client = text(c.azp);
    return c.gty === 'client-credentials' && client !== undefined && text(c.sub) === `${client}@clients`
      ? client
      : undefined;
  },
  // Keycloak service-account tokens: the client in `azp` and in `client_id` (`clientId` before
  // Keycloak 22), the account's user name `service-account-<client>`. Both are required, so a user
  // named like a service account is still read as a user (user tokens carry no client_id claim).
  keycloak: (c) => {
    const client = text(c.azp);
    const named = client !== undefined && text(c.preferred_username) === `service-account-${client}`;
    return named && (text(c.client_id) === client || text(c.clientId) === client) ? client : undefined;
  },
  // Microsoft Entra ID application tokens: `idtyp: app`, the client in `azp` (v2.0) or `appid` (v1.0).
  entra: (c) => (c.idtyp === 'app' ? (text(c.azp) ?? text(c.appid)) : undefined),
};

/** The client of a client-credentials token of an enabled shape, or undefined for a user token. */
export function clientOfToken(claims: JWTPayload, shapes: readonly ClientTokenShape[]): string | undefined {
  for (const shape of shapes) {
    const client = SHAPES[shape](claims);
    if (client !== undefined) return client;
  }
  return undefined;
}
