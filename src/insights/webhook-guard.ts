/**
 * The webhook guard of the service (webhook-subscriptions.ts `WebhookGuard`), from the delivery
 * side's own rules: a subscription's secret derived from the signing key and its salt
 * (webhooks/secret.ts), and the target check deliveries make again before every attempt
 * (webhooks/target.ts), run once at creation, its lookup the caller's organization's (the gate
 * keeps one organization from holding every lookup slot). A refusal tells the caller why without what the host
 * resolved to; the log gets that. None when webhooks are off (server mode without
 * WEBHOOK_SIGNING_KEY): subscriptions cannot be created then.
 */
import type { Config } from '../config.ts';
import type { WebhookGuard } from './webhook-subscriptions.ts';
import type { LookupGate, Resolve } from './webhooks/lookup.ts';
import { loadSigningKey, subscriptionSecret } from './webhooks/secret.ts';
import { checkWebhookUrl, WebhookTargetRefused } from './webhooks/target.ts';

type Log = { info(obj: object, msg: string): void };

/** Where the guard's lookups go: the system's resolver and the process's gate, unless a test gives its own. */
export interface GuardLookups {
  resolve?: Resolve;
  gate?: LookupGate;
}

export async function webhookGuard(
  config: Pick<Config, 'webhooks' | 'dataDir' | 'databaseUrl'>,
  log?: Log,
  lookups: GuardLookups = {},
): Promise<WebhookGuard | undefined> {
  const key = await loadSigningKey(config);
  if (key === null) return undefined;
  return {
    secretOf: (salt) => subscriptionSecret(key, salt),
    refusal: async (url, orgId) => {
      try {
        await checkWebhookUrl(url.href, config.webhooks, { ...lookups, org: orgId });
        return null;
      } catch (err) {
        if (!(err instanceof WebhookTargetRefused)) throw err;
        // The host only: a URL's path and query may carry the subscriber's own secrets.
        log?.info({ host: url.hostname, reason: err.reason, detail: err.detail }, 'webhook target refused');
        return err.message;
      }
    },
  };
}
