/**
 * Looking a webhook target's host up (src/insights/webhooks/lookup.ts, target.ts): cut at
 * WEBHOOK_LOOKUP_TIMEOUT_MS, at creation and at each attempt; at most a few lookups at once, a
 * lookup past its timeout keeping its slot until it returns; and a refusal that tells the
 * subscriber nothing of what the resolver answered (the log's detail does). Resolvers of the
 * test's own, answering when the test says; the clock is vitest's, moved by hand.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { LookupGate, type Resolve } from '../../src/insights/webhooks/lookup.ts';
import { sendWebhook } from '../../src/insights/webhooks/send.ts';
import { checkWebhookUrl, targetRules, WebhookTargetRefused } from '../../src/insights/webhooks/target.ts';

const NOT_REACHABLE =
  "the URL's host does not resolve, or resolves to an address webhooks may not reach (see WEBHOOK_ALLOWED_TARGETS)";

const config = (env: Record<string, string> = {}) => loadConfig({ WEBHOOK_LOOKUP_TIMEOUT_MS: '1000', ...env }).webhooks;

/** A resolver whose every lookup waits until the test answers it. */
function heldResolver() {
  const pending = new Map<string, (addresses: { address: string; family: number }[]) => void>();
  const calls: string[] = [];
  const resolve: Resolve = (host) => {
    calls.push(host);
    return new Promise((answer) => pending.set(host, answer));
  };
  const answer = (host: string, address = '93.184.215.14') => pending.get(host)?.([{ address, family: 4 }]);
  return { resolve, calls, answer };
}

/** The outcome of a check, readable before it settles (`pending`). */
function watch(check: Promise<void>) {
  const seen: { outcome: 'pending' | 'allowed' | WebhookTargetRefused } = { outcome: 'pending' };
  check.then(
    () => (seen.outcome = 'allowed'),
    (err: unknown) => (seen.outcome = err as WebhookTargetRefused),
  );
  return seen;
}

describe('webhook lookups', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a lookup without an answer is refused at its timeout, saying so, not before', async () => {
    const held = heldResolver();
    const check = watch(checkWebhookUrl('https://slow.example/x', config(), held.resolve, new LookupGate(2)));
    await vi.advanceTimersByTimeAsync(999);
    expect(check.outcome).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(check.outcome).toBeInstanceOf(WebhookTargetRefused);
    const refused = check.outcome as WebhookTargetRefused;
    expect([refused.reason, refused.message, refused.detail]).toEqual([
      'unresolved',
      "the URL's host did not resolve within 1000 ms; try again later",
      'the lookup of slow.example had no answer within 1000 ms',
    ]);
  });

  it('runs at most its number of lookups at once; one past its timeout keeps its slot until it returns', async () => {
    const held = heldResolver();
    const gate = new LookupGate(2);
    const check = (host: string) => watch(checkWebhookUrl(`https://${host}/x`, config(), held.resolve, gate));
    const [a, b, c] = [check('a.example'), check('b.example'), check('c.example')];
    await vi.advanceTimersByTimeAsync(0);
    expect(held.calls).toEqual(['a.example', 'b.example']);
    await vi.advanceTimersByTimeAsync(1000);
    // All three timed out; c never reached the resolver, a and b still run and hold their slots.
    for (const w of [a, b, c]) expect((w.outcome as WebhookTargetRefused).message).toMatch(/did not resolve within/);
    expect(gate.inFlight).toBe(2);
    const d = check('d.example');
    await vi.advanceTimersByTimeAsync(500);
    expect(held.calls).toEqual(['a.example', 'b.example']);
    held.answer('a.example');
    await vi.advanceTimersByTimeAsync(0);
    expect(held.calls).toEqual(['a.example', 'b.example', 'd.example']);
    held.answer('d.example');
    await vi.advanceTimersByTimeAsync(0);
    expect(d.outcome).toBe('allowed');
    held.answer('b.example');
    await vi.advanceTimersByTimeAsync(0);
    expect(gate.inFlight).toBe(0);
  });

  it('an attempt whose lookup has no answer fails as unresolved at the lookup timeout', async () => {
    const held = heldResolver();
    const attempt = sendWebhook('https://slow.example/hooks', {}, '{}', {
      rules: targetRules(config()),
      timeoutMs: 5000,
      resolve: held.resolve,
      gate: new LookupGate(2),
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(await attempt).toEqual({
      ok: false,
      failure: 'unresolved',
      detail: 'the lookup of slow.example had no answer within 1000 ms',
    });
  });
});

describe('what a refused name tells', () => {
  const answers: [string, Resolve, string][] = [
    [
      'a loopback address',
      async () => [{ address: '127.0.0.1', family: 4 }],
      'vm resolves to 127.0.0.1, a loopback address',
    ],
    [
      'a private address among public ones',
      async () => [
        { address: '93.184.215.14', family: 4 },
        { address: '10.20.30.40', family: 4 },
      ],
      'vm resolves to 10.20.30.40, a private address',
    ],
    [
      'a link-local IPv6 address',
      async () => [{ address: 'fe80::1', family: 6 }],
      'vm resolves to fe80::1, a link-local address',
    ],
    [
      'no such name',
      () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND vm'), { code: 'ENOTFOUND' })),
      'the lookup of vm failed: ENOTFOUND',
    ],
    [
      'a failing resolver',
      () => Promise.reject(Object.assign(new Error('getaddrinfo EAI_AGAIN vm'), { code: 'EAI_AGAIN' })),
      'the lookup of vm failed: EAI_AGAIN',
    ],
    ['no address', async () => [], 'vm has no address'],
  ];

  it.each(answers)('%s: the same message, without the answer; the detail has it', async (_case, resolve, detail) => {
    const refused = await checkWebhookUrl('https://vm/x', config(), resolve, new LookupGate(2)).then(
      () => null,
      (err: unknown) => err as WebhookTargetRefused,
    );
    expect([refused?.message, refused?.detail]).toEqual([NOT_REACHABLE, detail]);
  });
});

describe('webhook lookup and creation settings', () => {
  it('are bounded at start-up, naming the variable', () => {
    expect(loadConfig({}).webhooks).toMatchObject({ lookupTimeoutMs: 5000, creationsPerMinute: 10 });
    for (const [name, bad] of [
      ['WEBHOOK_LOOKUP_TIMEOUT_MS', '99'],
      ['WEBHOOK_LOOKUP_TIMEOUT_MS', '60001'],
      ['WEBHOOK_CREATIONS_PER_MIN', '0'],
    ] as const) {
      expect(() => loadConfig({ [name]: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: bad })).toThrow(new RegExp(name));
    }
  });
});
