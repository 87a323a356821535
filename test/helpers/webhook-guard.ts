/**
 * Interim: the webhook guard of the test app until the delivery side exports the service's own
 * (secrets derived by HMAC from a fixed key; every URL allowed).
 */
import { createHmac } from 'node:crypto';
import type { WebhookGuard } from '../../src/insights/webhook-subscriptions.ts';

export function testWebhookGuard(): WebhookGuard {
  return {
    secretOf: (salt) => `whsec_${createHmac('sha256', 'test-key').update(salt).digest('base64')}`,
    refusal: async () => null,
  };
}
