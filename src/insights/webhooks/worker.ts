/**
 * The webhook worker: in every service process, it keeps up to WEBHOOK_CONCURRENCY attempts in
 * flight, claiming due deliveries from the outbox (leased, so replicas never send one at once)
 * whenever a slot frees and at every poll. Claims are fair (insight-port.ts `WebhookOutbox`): one
 * delivery in flight per subscription and organizations taking turns, so a slow receiver holds one
 * slot and a big backlog waits its turns behind other organizations'. For each delivery it checks
 * the subscription's creator may still read the insight, signs the body per Standard Webhooks and
 * POSTs it (send.ts). 2xx: the delivery is done. Otherwise it is retried with exponential backoff
 * and jitter until WEBHOOK_RETRY_FOR_MS after it was enqueued, then given up. A subscription whose
 * attempts failed WEBHOOK_PAUSE_AFTER_FAILURES times in a row is paused for the backoff of its
 * failures: its deliveries wait, ids unchanged, and those whose retry bound ends within the pause
 * are given up. An attempt whose host lookup never started (no lookup slot free: lookup.ts) says
 * nothing of the receiver: it is put back a moment later, not counted against the subscription.
 * docs/webhooks.md says the same for subscribers.
 */
import { Webhook } from 'standardwebhooks';
import { loadAccess } from '../../auth/access.ts';
import type { WebhookConfig } from '../../config-webhooks.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { Delivery, InsightRecord, WebhookSubscription } from '../../store/insight-port.ts';
import type { RegistryStore } from '../../store/registry-port.ts';
import { insightCreatedBody } from '../resource.ts';
import { subscriptionSecret } from './secret.ts';
import type { LookupGate, Resolve } from './lookup.ts';
import { sendWebhook, type Attempt } from './send.ts';
import { targetRules } from './target.ts';

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
  /** The system's resolver and the process's lookup gate, unless a test gives its own. */
  lookups?: { resolve?: Resolve; gate?: LookupGate };
}

export interface WebhookWorker {
  /**
   * Sends what is due now: fills the free slots, claims again as each attempt settles, and
   * resolves once none is in flight and a claim found nothing more; answers how many it claimed.
   */
  runOnce(): Promise<number>;
  /** Claims every WEBHOOK_POLL_MS (and whenever an attempt settles). */
  start(): void;
  /** Stops claiming and waits (a moment at most) for the attempts under way. */
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

/**
 * The wait before an attempt whose lookup never started: the lookup timeout, its upper half
 * jittered (a slot held past its timeout frees when its lookup returns, not before).
 */
function postponeMs(config: WebhookConfig, random: () => number): number {
  return Math.round(config.lookupTimeoutMs / 2 + (config.lookupTimeoutMs / 2) * random());
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
  const count = (outcome: string, n = 1) => metrics?.webhookDeliveries.inc({ outcome }, n);

  const attempt = async (d: Delivery, s: WebhookSubscription, insight: InsightRecord): Promise<Attempt> => {
    const body = insightCreatedBody(insight);
    const at = new Date(now());
    const headers = {
      'webhook-id': d.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(subscriptionSecret(signingKey, s.secret_salt)).sign(d.id, at, body),
    };
    const lookup = { ...options.lookups, org: s.org_id };
    return sendWebhook(s.url, headers, body, { rules, timeoutMs: config.timeoutMs, lookup });
  };

  /**
   * A failed attempt counted against its subscription, paused once it failed too many times in a
   * row; answers when the pause ends (0: not paused).
   */
  const failed = async (s: WebhookSubscription): Promise<number> => {
    const failures = await store.recordAttempt(s.id, false);
    if (failures < config.pauseAfterFailures) return 0;
    const nowMs = now();
    const untilMs = nowMs + backoffMs(config, failures, random);
    const gaveUp = await store.pauseSubscription(s.id, {
      nowMs,
      untilMs,
      giveUpEnqueuedBeforeMs: untilMs - config.retryForMs,
    });
    metrics?.webhookPauses.inc();
    if (gaveUp > 0) count('given_up', gaveUp);
    log.warn(
      { subscription: s.id, failures, paused_until: new Date(untilMs).toISOString(), given_up: gaveUp },
      'webhook subscription paused: its receiver keeps failing',
    );
    return untilMs;
  };

  /**
   * An attempt that never started (no lookup slot): put back without a strike nor an attempt
   * counted, given up only when its retry bound ends first.
   */
  const postpone = async (d: Delivery, s: WebhookSubscription, detail: string): Promise<void> => {
    metrics?.webhookPostponed.inc();
    const next = now() + postponeMs(config, random);
    if (next <= d.enqueued_ms + config.retryForMs) return store.postponeDelivery(d.id, next);
    log.warn({ delivery: d.id, subscription: s.id, detail }, 'webhook delivery not attempted; given up');
    await store.completeDelivery(d.id);
    count('given_up');
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
    // The subscription's health is written while the delivery is still leased, so no claim takes
    // its next delivery before a pause is in place.
    if (outcome.ok) {
      await store.recordAttempt(s.id, true);
      await store.completeDelivery(d.id);
      count('succeeded');
      return;
    }
    if (outcome.failure === 'lookup_busy') return postpone(d, s, outcome.detail);
    metrics?.webhookAttemptFailures.inc({ reason: outcome.failure });
    // A body too large says nothing of the receiver.
    const pausedUntil = outcome.failure === 'too_large' ? 0 : await failed(s);
    const next = Math.max(now() + backoffMs(config, d.attempts, random), pausedUntil);
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

  let active = 0;
  let claimed = 0;
  let claiming: Promise<void> | null = null;
  /** Attempts settled so far: a claim under way claims again when one settled meanwhile. */
  let settled = 0;
  let stopped = false;
  const idle: (() => void)[] = [];
  const whenIdle = () =>
    active === 0 && claiming === null ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve));
  const notOutbox = (err: unknown) => log.warn({ err }, 'webhook outbox not read; tried again at the next poll');

  const send = (d: Delivery) => {
    active++;
    settle(d)
      // A store failure leaves the delivery leased: it is claimed again when the lease ends.
      .catch((err: unknown) => log.warn({ err, delivery: d.id }, 'webhook delivery not settled'))
      .finally(() => {
        active--;
        settled++;
        fill().catch(notOutbox);
      });
  };

  /** Claims into the free slots, one claim at a time, again when an attempt settled meanwhile. */
  const fill = (): Promise<void> => {
    if (claiming !== null) return claiming;
    claiming = (async () => {
      for (let seen = -1; seen !== settled;) {
        seen = settled;
        const free = config.concurrency - active;
        if (stopped || free <= 0) return;
        const due = await store.claimDeliveries(now(), leaseMs(config), free);
        claimed += due.length;
        for (const d of due) send(d);
      }
    })().finally(() => {
      claiming = null;
      if (active === 0) for (const resolve of idle.splice(0)) resolve();
    });
    return claiming;
  };

  const runOnce = async (): Promise<number> => {
    const before = claimed;
    await fill();
    await whenIdle();
    return claimed - before;
  };

  let timer: NodeJS.Timeout | undefined;
  let started = false;
  const tick = () => {
    fill()
      .catch(notOutbox)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, config.pollMs).unref();
      });
  };

  return {
    runOnce,
    start() {
      if (started || stopped) return;
      started = true;
      tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // Attempts under way get a moment to settle; one cut by the shutdown is sent again after its lease.
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([whenIdle(), new Promise((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
      clearTimeout(grace);
    },
  };
}
