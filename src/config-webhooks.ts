/**
 * The webhook section of the configuration (config.ts reads it with the rest): the signing key,
 * the private targets allowed, and the bounds of delivery. docs/configuration.md lists them.
 */
import net from 'node:net';
import { ConfigError, int, list, optional, type Env } from './config-values.ts';

export interface WebhookConfig {
  /**
   * WEBHOOK_SIGNING_KEY: every subscription's signing secret is derived from it and the
   * subscription's salt. Unset: the embedded service keeps a generated one in DATA_DIR; in server
   * mode webhooks are off (replicas must share the key).
   */
  signingKey: string | undefined;
  /**
   * Targets a webhook may reach although their address is not public (private, loopback,
   * link-local, …): host names (lowercase, exact) and address blocks (`address/prefix`).
   */
  allowedHosts: string[];
  allowedBlocks: { address: string; prefix: number }[];
  /** One attempt, from resolving the host to the response's status, is cut after this long. */
  timeoutMs: number;
  /** A lookup of a target's host name (at creation and at each attempt) is cut after this long. */
  lookupTimeoutMs: number;
  /** Subscriptions one caller may try to create a minute (each one resolves a host name). */
  creationsPerMinute: number;
  /** Attempts stop this long after the delivery was enqueued (it is given up). */
  retryForMs: number;
  /** The first retry waits about this long; each next one twice as long (with jitter), at most an hour. */
  retryBaseMs: number;
  /** The outbox is looked at this often (and again whenever an attempt settles). */
  pollMs: number;
  /** Attempts in flight at once per process; a subscription never has more than one. */
  concurrency: number;
  /** A subscription whose attempts failed this many times in a row is paused (docs/webhooks.md). */
  pauseAfterFailures: number;
  /** Deliveries one organization may owe; past it, new ones are not enqueued (counted in /metrics). */
  maxOwedPerOrg: number;
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;

/** An entry of WEBHOOK_ALLOWED_TARGETS: an address, an address block, or a host name. */
function allowedTarget(entry: string, out: Pick<WebhookConfig, 'allowedHosts' | 'allowedBlocks'>): void {
  const [address = '', prefixText, ...rest] = entry.replace(/^\[(.*)\]$/, '$1').split('/');
  const family = net.isIP(address);
  if (family !== 0 && rest.length === 0) {
    const bits = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
    if (prefix < 0 || prefix > bits)
      throw new ConfigError(`WEBHOOK_ALLOWED_TARGETS: "${entry}" has a prefix length outside 0-${bits}`);
    out.allowedBlocks.push({ address, prefix });
  } else if (prefixText === undefined && HOST_NAME.test(entry.toLowerCase())) {
    out.allowedHosts.push(entry.toLowerCase().replace(/\.$/, ''));
  } else {
    throw new ConfigError(`WEBHOOK_ALLOWED_TARGETS: "${entry}" is neither a host name, an address nor address/prefix`);
  }
}

export function webhookConfig(env: Env): WebhookConfig {
  const signingKey = optional(env, 'WEBHOOK_SIGNING_KEY');
  if (signingKey !== undefined && signingKey.length < 32)
    throw new ConfigError('WEBHOOK_SIGNING_KEY must be at least 32 characters (a random value, kept secret)');
  const config: WebhookConfig = {
    signingKey,
    allowedHosts: [],
    allowedBlocks: [],
    timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    lookupTimeoutMs: int(env, 'WEBHOOK_LOOKUP_TIMEOUT_MS', 5_000, 100, 60_000),
    creationsPerMinute: int(env, 'WEBHOOK_CREATIONS_PER_MIN', 10, 1, 100_000),
    retryForMs: int(env, 'WEBHOOK_RETRY_FOR_MS', 86_400_000, 0, 30 * 86_400_000),
    retryBaseMs: int(env, 'WEBHOOK_RETRY_BASE_MS', 5_000, 1, 3_600_000),
    pollMs: int(env, 'WEBHOOK_POLL_MS', 1_000, 10, 3_600_000),
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 16, 1, 256),
    pauseAfterFailures: int(env, 'WEBHOOK_PAUSE_AFTER_FAILURES', 5, 1, 1_000),
    maxOwedPerOrg: int(env, 'WEBHOOK_MAX_OWED_PER_ORG', 10_000, 1, 10_000_000),
  };
  for (const entry of list(env, 'WEBHOOK_ALLOWED_TARGETS', [])) allowedTarget(entry, config);
  return config;
}
