/**
 * The webhook worker's fairness (src/insights/webhooks/worker.ts) over each registry engine and
 * real HTTP receivers: a receiver that does not answer holds one slot, not its organization's
 * backlog in front of everyone; a subscription that keeps failing is paused, its deliveries kept;
 * an organization's debt is bounded, what is turned away counted. No timing is measured: receivers
 * answer when the test releases them, and the worker's clock moves by hand.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import { loadConfig } from '../../src/config.ts';
import type { WebhookConfig } from '../../src/config-webhooks.ts';
import { outboxBound } from '../../src/insights/webhooks/start.ts';
import { createWebhookWorker } from '../../src/insights/webhooks/worker.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { insight, subscription } from '../contract/insight-contract.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { startReceiver, type Received, type Receiver } from '../fixtures/webhook-receiver.ts';
import { registryEngines } from '../helpers/registry-engines.ts';

const KEY = 'test-signing-key-of-32-characters!';
const engines = await registryEngines('fair');

/** A counter without labels, as /metrics prints it. */
const sample = async (metrics: Metrics, name: string) =>
  Number(
    (await metrics.registry.getSingleMetricAsString(name))
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
      ?.slice(name.length + 1),
  );
const insightOf = (r: Received) => (JSON.parse(r.body) as { data: { id: string } }).data.id;
const ids = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);

describe.each(engines)('webhook fairness: %s', (_engine, open) => {
  let slow: Receiver;
  let fast: Receiver;
  let store: RegistryStore;
  let metrics: Metrics;
  let clock: number;
  const warnings: string[] = [];
  beforeAll(async () => {
    [slow, fast] = await Promise.all([startReceiver(), startReceiver()]);
  });
  afterAll(async () => Promise.all([slow.close(), fast.close()]));
  afterEach(async () => store.close());

  /** Org A's sub-a sends to the slow receiver, org B's sub-b to the fast one. */
  const setUp = async (extra: Partial<WebhookConfig> = {}) => {
    store = await open();
    await store.importBundle(parseBundle(smallBundle()));
    await store.insights.createSubscription(subscription('sub-a', { url: slow.url }));
    await store.insights.createSubscription(
      subscription('sub-b', { url: fast.url, org_id: 'org-b', workspace_id: 'ws-b', created_by: 'u-b' }),
    );
    for (const r of [slow, fast]) {
      r.received.length = 0;
      r.answer = () => ({ status: 204 });
    }
    warnings.length = 0;
    metrics = createMetrics({ defaultMetrics: false });
    clock = Date.now();
    const config = {
      ...loadConfig({ WEBHOOK_ALLOWED_TARGETS: '127.0.0.1' }).webhooks,
      retryBaseMs: 1000,
      // Far beyond any loaded machine: an attempt ends when the test releases it.
      timeoutMs: 120_000,
      ...extra,
    };
    const log = { warn: (_obj: object, msg: string) => void warnings.push(msg) };
    const worker = createWebhookWorker({
      registry: store,
      config,
      signingKey: KEY,
      metrics,
      log,
      now: () => clock,
      random: () => 1,
    });
    return { worker, config, log };
  };
  /** Each insight recorded a millisecond after the one before, the first `ago` ms before the clock. */
  const record = async (names: string[], ago: number, extra = {}) => {
    for (const [i, id] of names.entries()) await store.insights.recordInsights([insight(id, extra)], clock - ago + i);
  };
  const recordA = (names: string[], ago = 1000) => record(names, ago);
  const recordB = (names: string[], ago = 500) => record(names, ago, { org_id: 'org-b', workspace_id: 'ws-b' });

  it("a receiver that never answers holds one slot: another organization's deliveries all arrive meanwhile", async () => {
    const { worker } = await setUp();
    const arrivals: string[] = [];
    let release: (answer: { status: number }) => void = () => undefined;
    const released = new Promise<{ status: number }>((resolve) => (release = resolve));
    slow.answer = (r) => (arrivals.push(`A ${insightOf(r)}`), released);
    fast.answer = (r) => (arrivals.push(`B ${insightOf(r)}`), { status: 204 });
    // Org A's backlog is older than all of org B's, and larger than the worker's slots.
    await recordA(ids('a', 20));
    await recordB(ids('b', 5));

    const run = worker.runOnce();
    // Whichever comes first: B's five, or a second request to A (one slow receiver taking more slots).
    await Promise.race([fast.waitFor(5), slow.waitFor(2)]);
    expect([slow.received.length, fast.received.length]).toEqual([1, 5]);
    release({ status: 204 });
    expect(await run).toBe(25);

    // A's first went out before or among B's; every other of A's only after its first was answered.
    expect(arrivals.slice(0, 6).filter((a) => a.startsWith('B'))).toHaveLength(5);
    expect(arrivals.slice(6)).toEqual(
      ids('a', 20)
        .slice(1)
        .map((id) => `A ${id}`),
    );
    // Within the subscription, oldest first.
    expect(slow.received.map(insightOf)).toEqual(ids('a', 20));
    expect(fast.received.map(insightOf)).toEqual(ids('b', 5));
    expect(await store.insights.countDeliveries()).toBe(0);
  });

  it('a subscription that keeps failing is paused: its deliveries wait with their ids, others go on', async () => {
    const { worker } = await setUp({ pauseAfterFailures: 3 });
    slow.answer = () => ({ status: 500 });
    await recordA(ids('a', 5));
    await recordB(ids('b', 4));
    // Three of A's fail one after the other (each retried in 1 s), then A is paused for 1 s × 2^3
    // (and the third retried after the pause).
    expect(await worker.runOnce()).toBe(3 + 4);
    expect(slow.received.map(insightOf)).toEqual(ids('a', 3));
    expect(await sample(metrics, 'gateway_webhook_subscription_pauses_total')).toBe(1);
    expect(warnings).toContain('webhook subscription paused: its receiver keeps failing');
    expect(await store.insights.countDeliveries()).toBe(5);
    // The retries are due, the pause is not over: nothing goes.
    clock += 7_999;
    expect(await worker.runOnce()).toBe(0);
    await recordB(['b-late'], 0);
    expect(await worker.runOnce()).toBe(1);
    // The pause over and the receiver back: everything owed goes, the first three with their first ids.
    clock += 1;
    slow.answer = () => ({ status: 200 });
    expect(await worker.runOnce()).toBe(5);
    const tried = slow.received.slice(0, 3).map((r) => r.headers['webhook-id']);
    const sent = slow.received.slice(3).map((r) => r.headers['webhook-id']);
    expect(new Set(sent).size).toBe(5);
    for (const id of tried) expect(sent).toContain(id);
    expect(slow.received.slice(3).map(insightOf).sort()).toEqual(ids('a', 5));
    expect(await store.insights.countDeliveries()).toBe(0);
    expect(await sample(metrics, 'gateway_webhook_subscription_pauses_total')).toBe(1);
  });

  it('deliveries past what an organization may owe are not enqueued, counted, and others still are', async () => {
    const { config, log } = await setUp({ maxOwedPerOrg: 3 });
    const bound = outboxBound(config, metrics, log);
    await store.insights.recordInsights(
      ids('a', 5).map((id) => insight(id)),
      clock,
      bound,
    );
    await store.insights.recordInsights([insight('b-1', { org_id: 'org-b', workspace_id: 'ws-b' })], clock, bound);
    expect(await sample(metrics, 'gateway_webhook_deliveries_not_enqueued_total')).toBe(2);
    expect(warnings).toEqual([
      'webhook deliveries not enqueued: the organization owes WEBHOOK_MAX_OWED_PER_ORG already',
    ]);
    expect(await store.insights.countDeliveries()).toBe(4);
    expect((await store.insights.listInsights({ orgId: 'org-a', workspaceIds: ['ws-a-team'], limit: 10 })).length).toBe(
      5,
    );
  });
});
