/**
 * One subscriber's slow DNS and everyone else's webhooks (src/insights/webhooks/lookup.ts,
 * target.ts, send.ts, worker.ts). A lookup keeps its slot until getaddrinfo returns, past its
 * timeout; the process has two slots. So: an organization holds at most one (a subscriber whose
 * name server never answers stalls its own organization's lookups only), and an attempt whose
 * lookup never started, no slot coming free, is put back a moment later without counting against
 * its subscription (no strike, no pause, no attempt), counted in
 * `gateway_webhook_attempts_postponed_total`. Resolvers of the test's own; the worker over each
 * registry engine and a real HTTP receiver, its clock moved by hand.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseBundle } from '../../src/bundle/parse.ts';
import { loadConfig } from '../../src/config.ts';
import { LookupGate, systemGate, type Resolve } from '../../src/insights/webhooks/lookup.ts';
import { sendWebhook } from '../../src/insights/webhooks/send.ts';
import {
  resolveWebhookTarget,
  targetRules,
  WebhookTargetRefused,
  type TargetRules,
} from '../../src/insights/webhooks/target.ts';
import { createWebhookWorker } from '../../src/insights/webhooks/worker.ts';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import type { RegistryStore } from '../../src/store/registry-port.ts';
import { insight, subscription } from '../contract/insight-contract.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { startReceiver, type Receiver } from '../fixtures/webhook-receiver.ts';
import { registryEngines } from '../helpers/registry-engines.ts';

const rules: TargetRules = { allowedHosts: new Set(), allowedBlocks: [], lookupTimeoutMs: 100 };

/** `*.slow.example` never answers (an unresponsive name server: getaddrinfo holds its thread); the rest at once. */
function dns(address = '93.184.216.34') {
  const calls: string[] = [];
  const resolve: Resolve = (host) => {
    calls.push(host);
    return host.endsWith('.slow.example') ? new Promise(() => undefined) : Promise.resolve([{ address, family: 4 }]);
  };
  return { resolve, calls };
}

const reasonOf = (outcome: unknown) => (outcome instanceof WebhookTargetRefused ? outcome.reason : outcome);

describe('webhook lookups across organizations', () => {
  it("a subscriber's slow name server does not make another's target unresolved", async () => {
    const gate = new LookupGate(2, 1);
    const { resolve, calls } = dns();
    const attacker = ['https://a.slow.example/h', 'https://b.slow.example/h'].map((u) =>
      resolveWebhookTarget(u, rules, { org: 'org-attacker', resolve, gate }).catch((err: unknown) => err),
    );
    // The first timed out and holds its organization's one slot; the second never started.
    expect((await Promise.all(attacker)).map(reasonOf)).toEqual(['unresolved', 'busy']);
    expect([gate.inFlight, calls]).toEqual([1, ['a.slow.example']]);
    const victim = await resolveWebhookTarget('https://hooks.victim.example/in', rules, {
      org: 'org-victim',
      resolve,
      gate,
    });
    expect(victim.address).toBe('93.184.216.34');
  });

  it("the process's gate: two lookups at once, one per organization", async () => {
    const answers: (() => void)[] = [];
    const calls: string[] = [];
    const resolve: Resolve = (host) => {
      calls.push(host);
      return new Promise((answer) => answers.push(() => answer([{ address: '93.184.216.34', family: 4 }])));
    };
    const long = { ...rules, lookupTimeoutMs: 60_000 };
    const check = (host: string, org: string) => resolveWebhookTarget(`https://${host}/`, long, { org, resolve });
    const all = [check('a1.example', 'org-a'), check('a2.example', 'org-a'), check('b.example', 'org-b')];
    const later = check('c.example', 'org-c');
    await new Promise((r) => setImmediate(r));
    // a2 waits behind its organization's slot, c behind the process's two.
    expect([calls, systemGate.inFlight]).toEqual([['a1.example', 'b.example'], 2]);
    answers.shift()?.();
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['a1.example', 'b.example', 'a2.example']);
    while (calls.length < 4 || answers.length > 0) {
      answers.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    expect(calls).toEqual(['a1.example', 'b.example', 'a2.example', 'c.example']);
    await Promise.all([...all, later]);
    expect(systemGate.inFlight).toBe(0);
  });
});

describe("an attempt's lookup and its time", () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => receiver.close());
  afterEach(() => {
    vi.useRealTimers();
  });
  const config = targetRules(loadConfig({ WEBHOOK_ALLOWED_TARGETS: '127.0.0.1' }).webhooks);

  it('waits for a slot at most the lookup timeout, then is lookup_busy, the receiver never reached', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const gate = new LookupGate(1, 1);
    const { resolve } = dns('127.0.0.1');
    void resolveWebhookTarget('https://x.slow.example/', config, { org: 'org-x', resolve, gate }).catch(() => null);
    const url = `http://hooks.victim.example:${receiver.port}/in`;
    const lookup = { org: 'org-victim', resolve, gate };
    const now = (attempt: Promise<unknown>) => Promise.race([attempt, Promise.resolve('pending')]);
    const send = (timeoutMs: number) =>
      sendWebhook(url, {}, '{}', { rules: { ...config, lookupTimeoutMs: 1000 }, timeoutMs, lookup });
    const first = send(5000);
    await vi.advanceTimersByTimeAsync(999);
    expect(await now(first)).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(await now(first)).toEqual({
      ok: false,
      failure: 'lookup_busy',
      detail: 'the lookup of hooks.victim.example did not start: no slot came free within 1000 ms',
    });
    // The attempt's own timeout, when shorter, bounds the wait (its lease is two of them and 5 s).
    const second = send(300);
    await vi.advanceTimersByTimeAsync(300);
    expect(await now(second)).toMatchObject({ ok: false, failure: 'lookup_busy' });
    expect(receiver.received).toHaveLength(0);
  });

  it("the attempt's timeout runs from its lookup's start, not from the wait for a slot", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const gate = new LookupGate(1, 1);
    let free: () => void = () => undefined;
    const held: Resolve = () => new Promise((answer) => (free = () => answer([])));
    void resolveWebhookTarget('https://busy.example/', config, { org: 'org-x', resolve: held, gate }).catch(() => null);
    let answer: () => void = () => undefined;
    const resolve: Resolve = () => new Promise((a) => (answer = () => a([{ address: '127.0.0.1', family: 4 }])));
    const url = `http://hooks.victim.example:${receiver.port}/in`;
    const attempt = sendWebhook(url, {}, '{}', {
      rules: { ...config, lookupTimeoutMs: 1000 },
      timeoutMs: 1000,
      lookup: { org: 'org-victim', resolve, gate },
    });
    await vi.advanceTimersByTimeAsync(900);
    free();
    // The lookup starts at 900 ms and answers at 1500: the attempt's 1000 ms end at 1900.
    await vi.advanceTimersByTimeAsync(600);
    answer();
    expect(await attempt).toEqual({ ok: true, status: 204 });
  });
});

const KEY = 'test-signing-key-of-32-characters!';
const engines = await registryEngines('dns');

/** A counter as /metrics prints it (with its labels, when given). */
const sample = async (metrics: Metrics, name: string, labels = '') =>
  Number(
    (await metrics.registry.getSingleMetricAsString(name))
      .split('\n')
      .find((l) => l.startsWith(`${name}${labels} `))
      ?.slice(`${name}${labels} `.length) ?? 0,
  );

describe.each(engines)('the webhook worker and slow DNS: %s', (_engine, open) => {
  let receiver: Receiver;
  let store: RegistryStore;
  let metrics: Metrics;
  let clock: number;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => receiver.close());
  afterEach(async () => store.close());

  /** Org A's subscriptions send to names that never resolve, org B's to the receiver; one failure pauses. */
  const setUp = async (gate: LookupGate, attackers: number) => {
    store = await open();
    await store.importBundle(parseBundle(smallBundle()));
    for (let i = 0; i < attackers; i++)
      await store.insights.createSubscription(subscription(`sub-a${i}`, { url: `http://h${i}.slow.example/in` }));
    const victim = { org_id: 'org-b', workspace_id: 'ws-b', created_by: 'u-b' };
    const url = `http://hooks.b.example:${receiver.port}/in`;
    await store.insights.createSubscription(subscription('sub-b', { url, ...victim }));
    receiver.received.length = 0;
    metrics = createMetrics({ defaultMetrics: false });
    clock = Date.now();
    const config = {
      ...loadConfig({ WEBHOOK_ALLOWED_TARGETS: '127.0.0.1', WEBHOOK_LOOKUP_TIMEOUT_MS: '100' }).webhooks,
      pauseAfterFailures: 1,
      retryBaseMs: 1000,
      timeoutMs: 120_000,
    };
    const worker = createWebhookWorker({
      registry: store,
      config,
      signingKey: KEY,
      metrics,
      log: { warn: () => undefined },
      now: () => clock,
      random: () => 1,
      lookups: { resolve: dns('127.0.0.1').resolve, gate },
    });
    await store.insights.recordInsights([insight('in-a')], clock - 10);
    await store.insights.recordInsights([insight('in-b', victim)], clock - 5);
    return worker;
  };

  it("one organization's hanging lookups hold its own slot: another's deliveries go out", async () => {
    const worker = await setUp(new LookupGate(2, 1), 2);
    expect(await worker.runOnce()).toBe(3);
    expect(receiver.received.map((r) => r.headers.host)).toEqual([`hooks.b.example:${receiver.port}`]);
    // Org A: one lookup timed out (a strike, its subscription paused), the other never started (put back).
    expect(await sample(metrics, 'gateway_webhook_attempt_failures_total', '{reason="unresolved"}')).toBe(1);
    expect(await sample(metrics, 'gateway_webhook_subscription_pauses_total')).toBe(1);
    expect(await sample(metrics, 'gateway_webhook_attempts_postponed_total')).toBe(1);
    expect(await sample(metrics, 'gateway_webhook_deliveries_total', '{outcome="succeeded"}')).toBe(1);
  });

  it('a delivery whose lookup finds no slot is put back a moment later, without a strike', async () => {
    // One slot, held by a lookup of org A that never returns (a creation's, say): org B's cannot start.
    const gate = new LookupGate(1, 1);
    const worker = await setUp(gate, 0);
    const { resolve } = dns();
    void resolveWebhookTarget('https://x.slow.example/', rules, { org: 'org-a', resolve, gate }).catch(() => null);
    expect(await worker.runOnce()).toBe(1);
    expect(receiver.received).toHaveLength(0);
    expect(await sample(metrics, 'gateway_webhook_attempts_postponed_total')).toBe(1);
    expect(await sample(metrics, 'gateway_webhook_attempt_failures_total', '{reason="lookup_busy"}')).toBe(0);
    expect(await sample(metrics, 'gateway_webhook_subscription_pauses_total')).toBe(0);
    // Put back for the lookup timeout (its jitter at its top): not before.
    clock += 99;
    expect(await worker.runOnce()).toBe(0);
    // A strike would have paused sub-b for 2 s (one failure pauses), an attempt counted put it 1 s
    // back: it is claimed now, and busy again at once (the slot is held past its timeout).
    clock += 1;
    expect(await worker.runOnce()).toBe(1);
    expect(await sample(metrics, 'gateway_webhook_attempts_postponed_total')).toBe(2);
    expect(await sample(metrics, 'gateway_webhook_subscription_pauses_total')).toBe(0);
    expect(await store.insights.countDeliveries()).toBe(1);
  });
});
