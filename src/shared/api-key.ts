/**
 * The stored form of an API key: the SHA-256 hex of the clear key. The bundle import stores it and
 * the authenticator looks it up; nothing keeps the clear key.
 */
import { createHash } from 'node:crypto';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
