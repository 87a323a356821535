/**
 * Review probe: the process's lookup gate is shared by every organization and a lookup keeps its
 * slot until getaddrinfo returns. Two targets of one subscriber whose name server never answers
 * hold both slots; another organization's target, which resolves at once, is then refused as
 * `unresolved`, and the worker (worker.ts `failed`) counts that against the victim's subscription
 * (consecutive failures, a pause, deliveries given up).
 */
import { describe, expect, it } from 'vitest';
import { LookupGate, type Resolve } from '../../src/insights/webhooks/lookup.ts';
import { resolveWebhookTarget, type TargetRules } from '../../src/insights/webhooks/target.ts';

const rules: TargetRules = { allowedHosts: new Set(), allowedBlocks: [], lookupTimeoutMs: 100 };

describe('webhook lookups across organizations', () => {
  it("a subscriber's slow name server does not make another's target unresolved (fails)", async () => {
    const gate = new LookupGate(2);
    const resolve: Resolve = (host) =>
      host.endsWith('.slow.example')
        ? new Promise(() => undefined) // an unresponsive name server: getaddrinfo holds its thread
        : Promise.resolve([{ address: '93.184.216.34', family: 4 }]);
    const attacker = ['https://a.slow.example/h', 'https://b.slow.example/h'].map((u) =>
      resolveWebhookTarget(u, rules, resolve, gate).catch((err: unknown) => err),
    );
    await Promise.all(attacker);
    expect(gate.inFlight).toBe(2);
    const victim = await resolveWebhookTarget('https://hooks.victim.example/in', rules, resolve, gate);
    expect(victim.address).toBe('93.184.216.34');
  });
});
