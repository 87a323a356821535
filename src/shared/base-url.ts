/**
 * The base of the absolute URLs an answer carries (agent cards, the AI catalog):
 *
 * - `PUBLIC_BASE_URL` when configured: the request's headers are never read;
 * - otherwise the request's own origin: `http://` (the service listens without TLS of its own) and
 *   its `Host` header, which must be a host name, an IPv4 address or a bracketed IPv6 address, with
 *   an optional port. Anything else (a path, credentials, a query, spaces) is refused with 400
 *   before it can reach an answer.
 *
 * `Forwarded`, `X-Forwarded-Host` and `X-Forwarded-Proto` are never read: any client can send
 * them. Behind a proxy or a TLS terminator, set PUBLIC_BASE_URL.
 */
import { isIPv6 } from 'node:net';
import { ApiError } from '../errors.ts';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST = new RegExp(`^(?:(${LABEL}(?:\\.${LABEL})*)|\\[([0-9a-f:.]{2,45})\\])(?::(\\d{1,5}))?$`);

/** `host[:port]` as a URL authority, lower-cased; null when the value is not one. */
function hostAuthority(value: string | undefined): string | null {
  if (value === undefined || value.length > 261) return null;
  const host = value.toLowerCase();
  const m = HOST.exec(host);
  if (m === null) return null;
  if (m[2] !== undefined && !isIPv6(m[2])) return null;
  if (m[3] !== undefined && Number(m[3]) > 65535) return null;
  return host;
}

/** The base URL (no trailing slash) of this request's answers. */
export function baseUrlOf(configured: string | undefined, hostHeader: string | undefined): string {
  if (configured !== undefined) return configured;
  const authority = hostAuthority(hostHeader);
  if (authority === null)
    throw new ApiError(
      'invalid_request',
      'the Host header must be a host name or address with an optional port (or the service must be configured with PUBLIC_BASE_URL)',
    );
  return `http://${authority}`;
}
