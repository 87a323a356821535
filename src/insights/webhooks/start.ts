/**
 * Webhooks in the service process (main.ts): the signing key, the worker polling the outbox, the
 * outbox's depth in /metrics, and the bound on what one organization may owe it (detection
 * records insights under it). Without a signing key (server mode without WEBHOOK_SIGNING_KEY)
 * nothing is sent: the outbox keeps what it owes, up to that bound, and start-up says why.
 */
import { Gauge } from 'prom-client';
import type { Config } from '../../config.ts';
import type { WebhookConfig } from '../../config-webhooks.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { OutboxBound } from '../../store/insight-port.ts';
import type { RegistryStore } from '../../store/registry-port.ts';
import { loadSigningKey } from './secret.ts';
import { createWebhookWorker, type WebhookWorker } from './worker.ts';

const OUTBOX = 'gateway_webhook_outbox_deliveries';
const STORE_WAIT_MS = 2000;

/** The outbox depth, asked of the store when Prometheus scrapes (left out when it does not answer in 2 s). */
function watchOutbox(metrics: Metrics, registry: RegistryStore): void {
  if (metrics.registry.getSingleMetric(OUTBOX) !== undefined) return;
  new Gauge({
    name: OUTBOX,
    help: 'Webhook deliveries owed (due or waiting for a retry) in the outbox, every replica together',
    registers: [metrics.registry],
    async collect() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), STORE_WAIT_MS)));
      const depth = await Promise.race([registry.insights.countDeliveries().catch(() => null), late]);
      clearTimeout(timer);
      this.reset();
      if (depth !== null) this.set(depth);
    },
  });
}

/** WEBHOOK_MAX_OWED_PER_ORG as the insight store takes it: what it turns away is counted and logged. */
export function outboxBound(
  config: WebhookConfig,
  metrics: Metrics,
  log: { warn(obj: object, msg: string): void },
): OutboxBound {
  return {
    maxOwedPerOrg: config.maxOwedPerOrg,
    refused(orgId, deliveries) {
      metrics.webhookNotEnqueued.inc(deliveries);
      log.warn(
        { orgId, deliveries, max: config.maxOwedPerOrg },
        'webhook deliveries not enqueued: the organization owes WEBHOOK_MAX_OWED_PER_ORG already',
      );
    },
  };
}

export async function startWebhooks(
  config: Config,
  registry: RegistryStore,
  metrics: Metrics,
  log: { warn(obj: object, msg: string): void },
): Promise<WebhookWorker | null> {
  watchOutbox(metrics, registry);
  const signingKey = await loadSigningKey(config);
  if (signingKey === null) {
    log.warn({}, 'webhooks are off: server mode needs WEBHOOK_SIGNING_KEY (every replica signs with the same key)');
    return null;
  }
  const worker = createWebhookWorker({ registry, config: config.webhooks, signingKey, metrics, log });
  worker.start();
  return worker;
}
