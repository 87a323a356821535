/**
 * The webhook worker (src/insights/webhooks/worker.ts) over each registry engine and a real HTTP
 * receiver that verifies every request with the standardwebhooks package. The worker's clock is
 * the test's: it starts at the real time (signatures are checked against it) and moves by hand.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import { loadConfig } from '../../src/config.ts';
import type { WebhookConfig } from '../../src/config-webhooks.ts';
import { insightResource } from '../../src/insights/resource.ts';
import { subscriptionSecret } from '../../src/insights/webhooks/secret.ts';
import { createWebhookWorker, leaseMs } from '../../src/insights/webhooks/worker.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import type { InsightRecord } from '../../src/store/insight-port.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { insight, subscription } from '../contract/insight-contract.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { startReceiver, verified, type Receiver } from '../fixtures/webhook-receiver.ts';
import { registryEngines } from '../helpers/registry-engines.ts';

const KEY = 'test-signing-key-of-32-characters!';
const engines = await registryEngines('webhooks');

const counter = async (metrics: Metrics, name: string, label: string) =>
  (await metrics.registry.getSingleMetricAsString(name)).split('\n').find((l) => l.includes(`"${label}"`)) ?? '';

describe.each(engines)('webhook deliveries: %s', (_engine, open) => {
  let receiver: Receiver;
  let store: RegistryStore;
  let metrics: Metrics;
  let clock: number;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => receiver.close());
  afterEach(async () => store.close());

  /** A store with the small bundle and one subscription of `created_by` to the receiver. */
  const setUp = async (extra: Partial<WebhookConfig> = {}, createdBy = 'u-admin') => {
    store = await open();
    await store.importBundle(parseBundle(smallBundle()));
    await store.insights.createSubscription(subscription('sub-1', { url: receiver.url, created_by: createdBy }));
    receiver.received.length = 0;
    receiver.answer = () => ({ status: 204 });
    metrics = createMetrics({ defaultMetrics: false });
    clock = Date.now();
    const config = { ...loadConfig({ WEBHOOK_ALLOWED_TARGETS: '127.0.0.1' }).webhooks, retryBaseMs: 1000, ...extra };
    const makeWorker = (more: Partial<WebhookConfig> = {}) =>
      createWebhookWorker({
        registry: store,
        config: { ...config, ...more },
        signingKey: KEY,
        metrics,
        log: { warn: () => undefined },
        now: () => clock,
        random: () => 1,
      });
    return { worker: makeWorker(), makeWorker, config, secret: subscriptionSecret(KEY, 'salt-sub-1') };
  };
  const record = (...insights: InsightRecord[]) => store.insights.recordInsights(insights, clock);

  it('POSTs each insight once, signed: the receiver verifies every request', async () => {
    const { worker, secret } = await setUp();
    const tool = insight('in-2', {
      kind: 'tool_failure_hotspot',
      subject: { type: 'tool', id: 'search', server: 's' },
    });
    await record(insight('in-1'), tool);
    expect(await worker.runOnce()).toBe(2);
    expect(receiver.received.length).toBe(2);
    const bodies = receiver.received.map((r) => verified(secret, r) as { data: { id: string } });
    bodies.sort((a, b) => a.data.id.localeCompare(b.data.id));
    expect(bodies).toEqual([
      { type: 'insight.created', timestamp: insight('in-1').created_at, data: insightResource(insight('in-1')) },
      { type: 'insight.created', timestamp: tool.created_at, data: insightResource(tool) },
    ]);
    expect(bodies[1]?.data).toMatchObject({ window: { start_time_unix_seconds: 1_779_900_000 } });
    for (const r of receiver.received) {
      expect(r.headers['webhook-id']).toMatch(/^msg_/);
      expect(r.headers['webhook-timestamp']).toBe(String(Math.floor(clock / 1000)));
      expect(r.headers['content-type']).toBe('application/json');
    }
    expect(await store.insights.countDeliveries()).toBe(0);
    expect(await worker.runOnce()).toBe(0);
    expect(await counter(metrics, 'gateway_webhook_deliveries_total', 'succeeded')).toMatch(/ 2$/);
  });

  it('retries after a 500 with the same webhook-id, backing off, and stops at the first 2xx', async () => {
    const { worker, secret } = await setUp();
    receiver.answer = (_r, i) => (i < 2 ? { status: 500, body: 'busy' } : { status: 200 });
    await record(insight('in-1'));
    await worker.runOnce();
    // Backoff with the jitter at its top: 1 s, then 2 s.
    clock += 999;
    expect(await worker.runOnce()).toBe(0);
    clock += 1;
    expect(await worker.runOnce()).toBe(1);
    clock += 1999;
    expect(await worker.runOnce()).toBe(0);
    clock += 1;
    expect(await worker.runOnce()).toBe(1);
    expect(receiver.received.length).toBe(3);
    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const r of receiver.received) verified(secret, r);
    expect(receiver.received.map((r) => r.body)).toEqual(Array(3).fill(receiver.received[0]?.body));
    expect(await store.insights.countDeliveries()).toBe(0);
    expect(await counter(metrics, 'gateway_webhook_attempt_failures_total', 'status')).toMatch(/ 2$/);
  });

  it('gives up once the next attempt would fall past the retry bound, and counts it', async () => {
    const { worker } = await setUp({ retryForMs: 2500 });
    receiver.answer = () => ({ status: 503 });
    await record(insight('in-1'));
    await worker.runOnce(); // fails at 0 ms: next at 1 s, within 2.5 s
    clock += 1000;
    await worker.runOnce(); // fails at 1 s: next at 3 s, past the bound
    clock += 1e9;
    expect(await worker.runOnce()).toBe(0);
    expect(receiver.received.length).toBe(2);
    expect(await store.insights.countDeliveries()).toBe(0);
    expect(await counter(metrics, 'gateway_webhook_deliveries_total', 'given_up')).toMatch(/ 1$/);
    expect(await counter(metrics, 'gateway_webhook_deliveries_total', 'succeeded')).toBe('');
  });

  it('cuts an attempt the receiver never answers at the timeout, and tries again later', async () => {
    const { worker, makeWorker, config } = await setUp({ timeoutMs: 1000 });
    receiver.answer = () => 'hold';
    await record(insight('in-1'));
    expect(await worker.runOnce()).toBe(1);
    expect(await counter(metrics, 'gateway_webhook_attempt_failures_total', 'timeout')).toMatch(/ 1$/);
    expect(await store.insights.countDeliveries()).toBe(1);
    expect(leaseMs(config)).toBe(7_000);
    receiver.answer = () => ({ status: 200 });
    clock += 1000;
    // The retry, by a worker whose timeout no loaded machine reaches.
    expect(await makeWorker({ timeoutMs: 60_000 }).runOnce()).toBe(1);
    expect(await store.insights.countDeliveries()).toBe(0);
    expect(await counter(metrics, 'gateway_webhook_deliveries_total', 'succeeded')).toMatch(/ 1$/);
  });

  it('reads no more than a small bound of an answer that never ends', async () => {
    const { worker } = await setUp({ timeoutMs: 120_000 });
    receiver.answer = () => 'endless';
    await record(insight('in-1'));
    expect(await worker.runOnce()).toBe(1);
    expect(await counter(metrics, 'gateway_webhook_attempt_failures_total', 'status')).toMatch(/ 1$/);
  });

  it('sends nothing larger than the body bound: given up at once', async () => {
    const { worker } = await setUp();
    await record(insight('in-big', { payload: { blob: 'x'.repeat(70_000) } }), insight('in-1'));
    await worker.runOnce();
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id)).toEqual(['in-1']);
    expect(await counter(metrics, 'gateway_webhook_attempt_failures_total', 'too_large')).toMatch(/ 1$/);
    expect(await counter(metrics, 'gateway_webhook_deliveries_total', 'given_up')).toMatch(/ 1$/);
  });

  it('refuses a private target at the attempt when the allow-list does not name it', async () => {
    const { worker } = await setUp({ allowedBlocks: [], allowedHosts: [] });
    await record(insight('in-1'));
    await worker.runOnce();
    expect(receiver.received.length).toBe(0);
    expect(await counter(metrics, 'gateway_webhook_attempt_failures_total', 'refused')).toMatch(/ 1$/);
    expect(await store.insights.countDeliveries()).toBe(1);
  });

  it('never delivers an insight about a workspace its creator cannot read (a viewer of ws-a-team)', async () => {
    const { worker } = await setUp({}, 'u-viewer');
    await record(insight('in-team'));
    await store.insights.createSubscription(
      subscription('sub-other', { url: receiver.url, created_by: 'u-viewer', workspace_id: 'ws-a-other' }),
    );
    await record(insight('in-other', { workspace_id: 'ws-a-other' }));
    await worker.runOnce();
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id).sort()).toEqual([
      'in-team',
    ]);
    expect(await counter(metrics, 'gateway_webhook_deliveries_total', 'unauthorized')).toMatch(/ 1$/);
    expect(await store.insights.countDeliveries()).toBe(0);
  });

  it('sends nothing for a suspended creator or one the directory no longer has', async () => {
    const { worker } = await setUp({}, 'u-susp');
    await store.insights.createSubscription(subscription('sub-gone', { url: receiver.url, created_by: 'u-gone' }));
    await record(insight('in-1'));
    await worker.runOnce();
    expect(receiver.received.length).toBe(0);
    expect(await counter(metrics, 'gateway_webhook_deliveries_total', 'unauthorized')).toMatch(/ 2$/);
  });
});
