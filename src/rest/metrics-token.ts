/**
 * The optional bearer token of `GET /metrics` (METRICS_TOKEN): when configured, a scrape must send
 * `Authorization: Bearer <token>`; otherwise 401 `token_missing` or `token_rejected`. The token is
 * compared as SHA-256 digests with timingSafeEqual: equal lengths, constant time, so the answer's
 * timing tells nothing of how much of a guess was right.
 */
import crypto from 'node:crypto';
import { ApiError } from '../errors.ts';

const BEARER = /^Bearer +(\S+) *$/i;
const digest = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest();

/** A check of the Authorization header against `token`; undefined (no token configured) lets every scrape in. */
export function metricsTokenCheck(token: string | undefined): (authorization: string | undefined) => void {
  if (token === undefined) return () => undefined;
  const expected = digest(token);
  return (authorization) => {
    const sent = BEARER.exec(authorization ?? '')?.[1];
    if (sent === undefined)
      throw new ApiError('token_missing', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
    if (!crypto.timingSafeEqual(digest(sent), expected))
      throw new ApiError('token_rejected', 'the bearer token is not the metrics token');
  };
}
