/**
 * Looking a webhook target's host up (src/insights/webhooks/lookup.ts, target.ts): cut at
 * WEBHOOK_LOOKUP_TIMEOUT_MS, at creation and at each attempt; at most a few lookups at once, a
 * lookup past its timeout keeping its slot until it returns, one waiting for a slot at most as
 * long; and a refusal that tells the subscriber nothing of what the resolver answered (the log's
 * detail does). Each organization's own share of the slots: webhook-lookup-starvation.test.ts.
 * Resolvers of the test's own, answering when the test says; the clock is vitest's, moved by hand.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { LookupGate, type Resolve } from '../../src/insights/webhooks/lookup.ts';
import { sendWebhook } from '../../src/insights/webhooks/send.ts';
import { checkWebhookUrl, targetRules, WebhookTargetRefused } from '../../src/insights/webhooks/target.ts';

const NOT_REACHABLE =
  "the URL's host does not resolve, or resolves to an address webhooks may not reach (see WEBHOOK_ALLOWED_TARGETS)";
const BUSY = "the URL's host could not be looked up now: too many lookups are under way; try again later";

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
    const gate = new LookupGate(2);
    const check = watch(
      checkWebhookUrl('https://slow.example/x', config(), { org: 'org-a', resolve: held.resolve, gate }),
    );
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
    // Each of its own organization: only the process's bound applies.
    const check = (host: string) =>
      watch(checkWebhookUrl(`https://${host}/x`, config(), { org: `org-${host}`, resolve: held.resolve, gate }));
    const [a, b, c] = [check('a.example'), check('b.example'), check('c.example')];
    await vi.advanceTimersByTimeAsync(0);
    expect(held.calls).toEqual(['a.example', 'b.example']);
    // A slot frees: the waiting lookup starts, with the whole of its timeout.
    await vi.advanceTimersByTimeAsync(400);
    held.answer('a.example');
    await vi.advanceTimersByTimeAsync(0);
    expect([a.outcome, held.calls]).toEqual(['allowed', ['a.example', 'b.example', 'c.example']]);
    await vi.advanceTimersByTimeAsync(600);
    // b timed out and still holds its slot; c runs on (started at 400 ms).
    expect((b.outcome as WebhookTargetRefused).message).toMatch(/did not resolve within 1000 ms/);
    expect([c.outcome, gate.inFlight]).toEqual(['pending', 2]);
    await vi.advanceTimersByTimeAsync(400);
    expect((c.outcome as WebhookTargetRefused).message).toMatch(/did not resolve within 1000 ms/);
    // Both slots held past their timeout: a new lookup does not wait behind them, it is busy at once.
    const d = check('d.example');
    await vi.advanceTimersByTimeAsync(0);
    expect([(d.outcome as WebhookTargetRefused).reason, (d.outcome as WebhookTargetRefused).message]).toEqual([
      'busy',
      BUSY,
    ]);
    held.answer('b.example');
    await vi.advanceTimersByTimeAsync(0);
    const e = check('e.example');
    await vi.advanceTimersByTimeAsync(0);
    expect(held.calls).toEqual(['a.example', 'b.example', 'c.example', 'e.example']);
    held.answer('e.example');
    held.answer('c.example');
    await vi.advanceTimersByTimeAsync(0);
    expect([e.outcome, gate.inFlight]).toEqual(['allowed', 0]);
  });

  it('a lookup that finds no slot within its timeout is busy, never having reached the resolver', async () => {
    const held = heldResolver();
    const gate = new LookupGate(1);
    const check = (host: string) =>
      watch(checkWebhookUrl(`https://${host}/x`, config(), { org: `org-${host}`, resolve: held.resolve, gate }));
    check('a.example');
    await vi.advanceTimersByTimeAsync(500);
    // a is still within its timeout: b waits for it, 1000 ms at most.
    const b = check('b.example');
    await vi.advanceTimersByTimeAsync(999);
    expect(b.outcome).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    const refused = b.outcome as WebhookTargetRefused;
    expect([refused.reason, refused.message, refused.detail]).toEqual([
      'busy',
      BUSY,
      'the lookup of b.example did not start: no slot came free within 1000 ms',
    ]);
    expect(held.calls).toEqual(['a.example']);
  });

  it('an attempt whose lookup has no answer fails as unresolved at the lookup timeout', async () => {
    const held = heldResolver();
    const attempt = sendWebhook('https://slow.example/hooks', {}, '{}', {
      rules: targetRules(config()),
      timeoutMs: 5000,
      lookup: { org: 'org-a', resolve: held.resolve, gate: new LookupGate(2) },
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
    const lookup = { org: 'org-a', resolve, gate: new LookupGate(2) };
    const refused = await checkWebhookUrl('https://vm/x', config(), lookup).then(
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
