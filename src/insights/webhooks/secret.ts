/**
 * Signing secrets are derived, never stored: a subscription's secret is
 * `whsec_` + base64(HMAC-SHA256(signing key, the subscription's salt)). The service shows it once,
 * when the subscription is created, and derives it again to sign each attempt; the database holds
 * only the salt, so a copy of it signs nothing.
 *
 * The signing key: WEBHOOK_SIGNING_KEY when set. Otherwise the embedded service generates one
 * once into DATA_DIR (file mode 0600, `webhook-signing.key`); in server mode the replicas must
 * share it, so without WEBHOOK_SIGNING_KEY webhooks are off there.
 */
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.ts';

const KEY_FILE = 'webhook-signing.key';

export function subscriptionSecret(signingKey: string, salt: string): string {
  return `whsec_${createHmac('sha256', signingKey).update(salt).digest('base64')}`;
}

/** The key kept in `file`, created (atomically: written aside, then linked into place) when missing. */
async function readOrCreate(file: string): Promise<string> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await fs.mkdir(path.dirname(file), { recursive: true });
  const aside = `${file}.${String(process.pid)}.${randomBytes(6).toString('hex')}`;
  await fs.writeFile(aside, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await fs.link(aside, file);
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await fs.unlink(aside);
  }
  return (await fs.readFile(file, 'utf8')).trim();
}

const keys = new Map<string, Promise<string | null>>();

/**
 * The key subscription secrets are derived from, or null when webhooks are off (server mode
 * without WEBHOOK_SIGNING_KEY). Read once per data directory.
 */
export function loadSigningKey(config: Pick<Config, 'webhooks' | 'dataDir' | 'databaseUrl'>): Promise<string | null> {
  if (config.webhooks.signingKey !== undefined) return Promise.resolve(config.webhooks.signingKey);
  if (config.databaseUrl !== undefined) return Promise.resolve(null);
  const file = path.join(config.dataDir, KEY_FILE);
  let key = keys.get(file);
  if (key === undefined) {
    key = readOrCreate(file);
    keys.set(file, key);
    key.catch(() => keys.delete(file));
  }
  return key;
}
