/**
 * The webhook guard of the service (webhook-subscriptions.ts `WebhookGuard`), from the delivery
 * side's own rules: a subscription's secret derived from the signing key and its salt
 * (webhooks/secret.ts), and the target check deliveries make again before every attempt
 * (webhooks/target.ts), run once at creation. None when webhooks are off (server mode without
 * WEBHOOK_SIGNING_KEY): subscriptions cannot be created then.
 */
import type { Config } from '../config.ts';
import type { WebhookGuard } from './webhook-subscriptions.ts';
import { loadSigningKey, subscriptionSecret } from './webhooks/secret.ts';
import { checkWebhookUrl, WebhookTargetRefused } from './webhooks/target.ts';

export async function webhookGuard(
  config: Pick<Config, 'webhooks' | 'dataDir' | 'databaseUrl'>,
): Promise<WebhookGuard | undefined> {
  const key = await loadSigningKey(config);
  if (key === null) return undefined;
  return {
    secretOf: (salt) => subscriptionSecret(key, salt),
    refusal: async (url) => {
      try {
        await checkWebhookUrl(url.href, config.webhooks);
        return null;
      } catch (err) {
        if (err instanceof WebhookTargetRefused) return err.message;
        throw err;
      }
    },
  };
}
