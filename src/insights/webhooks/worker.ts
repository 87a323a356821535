/**
 * The webhook worker: in every service process, it claims due deliveries from the outbox (leased,
 * so replicas never send one at once), checks the subscription's creator may still read the
 * insight, signs the body per Standard Webhooks and POSTs it (send.ts). 2xx: the delivery is done.
 * Otherwise it is retried with exponential backoff and jitter until WEBHOOK_RETRY_FOR_MS after it
 * was enqueued, then given up. Every delivery is attempted at least once, however late.
 */
import { Webhook } from 'standardwebhooks';
import { loadAccess } from '../../auth/access.ts';
import type { WebhookConfig } from '../../config-webhooks.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { Delivery, InsightRecord, WebhookSubscription } from '../../store/insight-port.ts';
import type { RegistryStore } from '../../store/registry-port.ts';
import { insightCreatedBody } from '../resource.ts';
import { subscriptionSecret } from './secret.ts';
import { sendWebhook, type Attempt } from './send.ts';
import { targetRules } from './target.ts';

/** Deliveries claimed (and sent at once) per round. */
const BATCH = 16;
/** How long stop() waits for the round under way. */
const STOP_GRACE_MS = 2_000;
/** The longest wait between two attempts. */
const MAX_BACKOFF_MS = 3_600_000;

type Log = { warn(obj: object, msg: string): void };

export interface WebhookWorkerOptions {
  registry: RegistryStore;
  config: WebhookConfig;
  signingKey: string;
  metrics?: Metrics;
  log: Log;
  /** Unix milliseconds (tests move it by hand). */
  now?: () => number;
  /** In [0, 1): the jitter of the backoff. */
  random?: () => number;
}

export interface WebhookWorker {
  /** One round: claims up to a batch and settles each; answers how many were claimed. */
  runOnce(): Promise<number>;
  /** Polls the outbox every WEBHOOK_POLL_MS. */
  start(): void;
  /** Stops polling and waits (a moment at most) for the round under way. */
  stop(): Promise<void>;
}

/**
 * A claimed delivery is leased for two attempt timeouts and 5 s more: long enough for the attempt
 * and the store calls around it; when the process dies, another one sends it after that.
 */
export function leaseMs(config: WebhookConfig): number {
  return 2 * config.timeoutMs + 5_000;
}

/** The wait before the attempt after `failures` failed ones: base × 2^failures (at most an hour), its upper half jittered. */
function backoffMs(config: WebhookConfig, failures: number, random: () => number): number {
  const full = Math.min(MAX_BACKOFF_MS, config.retryBaseMs * 2 ** Math.min(failures, 32));
  return Math.round(full / 2 + (full / 2) * random());
}

/** Whether the subscription's creator is still an active user who can read the workspace (auth/access.ts). */
async function creatorCanRead(registry: RegistryStore, s: WebhookSubscription, workspaceId: string): Promise<boolean> {
  const [[user], [org]] = await Promise.all([registry.getUsers([s.created_by]), registry.getOrganizations([s.org_id])]);
  if (user === undefined || org === undefined || user.org_id !== org.id) return false;
  if (user.status === 'suspended' || org.status === 'suspended') return false;
  const access = await loadAccess(registry, { kind: 'user', orgId: org.id, userId: user.id });
  return access.canRead(workspaceId);
}

export function createWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { registry, config, signingKey, metrics, log } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const store = registry.insights;
  const rules = targetRules(config);
  const count = (outcome: string) => metrics?.webhookDeliveries.inc({ outcome });

  const attempt = async (d: Delivery, s: WebhookSubscription, insight: InsightRecord): Promise<Attempt> => {
    const body = insightCreatedBody(insight);
    const at = new Date(now());
    const headers = {
      'webhook-id': d.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(subscriptionSecret(signingKey, s.secret_salt)).sign(d.id, at, body),
    };
    return sendWebhook(s.url, headers, body, { rules, timeoutMs: config.timeoutMs });
  };

  const settle = async (d: Delivery): Promise<void> => {
    const [[s], [insight]] = await Promise.all([
      store.getSubscriptions(d.org_id, [d.subscription_id]),
      store.getInsights(d.org_id, [d.insight_id]),
    ]);
    if (s === undefined || insight === undefined) {
      await store.completeDelivery(d.id);
      count('dropped');
      return;
    }
    if (!(await creatorCanRead(registry, s, insight.workspace_id))) {
      await store.completeDelivery(d.id);
      count('unauthorized');
      return;
    }
    const outcome = await attempt(d, s, insight);
    if (outcome.ok) {
      await store.completeDelivery(d.id);
      count('succeeded');
      return;
    }
    metrics?.webhookAttemptFailures.inc({ reason: outcome.failure });
    const next = now() + backoffMs(config, d.attempts, random);
    const giveUp = outcome.failure === 'too_large' || next > d.enqueued_ms + config.retryForMs;
    log.warn(
      { delivery: d.id, subscription: s.id, attempt: d.attempts + 1, failure: outcome.failure, detail: outcome.detail },
      giveUp ? 'webhook delivery failed; given up' : 'webhook delivery failed; retried later',
    );
    if (giveUp) {
      await store.completeDelivery(d.id);
      count('given_up');
    } else {
      await store.retryDelivery(d.id, next);
    }
  };

  const runOnce = async (): Promise<number> => {
    const claimed = await store.claimDeliveries(now(), leaseMs(config), BATCH);
    await Promise.all(
      claimed.map((d) =>
        // A store failure leaves the delivery leased: it is claimed again when the lease ends.
        settle(d).catch((err: unknown) => log.warn({ err, delivery: d.id }, 'webhook delivery not settled')),
      ),
    );
    return claimed.length;
  };

  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    round = (async () => {
      try {
        while (!stopped && (await runOnce()) === BATCH);
      } catch (err) {
        log.warn({ err }, 'webhook outbox not read; tried again at the next poll');
      }
      if (!stopped) timer = setTimeout(tick, config.pollMs).unref();
    })();
  };

  return {
    runOnce,
    start() {
      if (timer === undefined && !stopped) tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // Attempts under way get a moment to settle; one cut by the shutdown is sent again after its lease.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([round, new Promise((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
      clearTimeout(grace);
    },
  };
}
