/**
 * Where webhooks may go (src/insights/webhooks/target.ts, addresses.ts): only public addresses,
 * unless WEBHOOK_ALLOWED_TARGETS names the host or a block; checked at creation and at each
 * attempt, the attempt connecting to the address checked. Real DNS (the system resolver), real
 * HTTP; a resolver of the test's own only where DNS must change between two answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { subscriptionSecret } from '../../src/insights/webhooks/secret.ts';
import type { Resolve } from '../../src/insights/webhooks/lookup.ts';
import { sendWebhook } from '../../src/insights/webhooks/send.ts';
import { checkWebhookUrl, targetRules, WebhookTargetRefused } from '../../src/insights/webhooks/target.ts';
import { startReceiver, type Receiver } from '../fixtures/webhook-receiver.ts';

/** What a subscriber is told of a name that does not resolve or resolves where webhooks may not go. */
const NOT_REACHABLE =
  "the URL's host does not resolve, or resolves to an address webhooks may not reach (see WEBHOOK_ALLOWED_TARGETS)";

const webhooks = (allowed?: string) =>
  loadConfig(allowed === undefined ? {} : { WEBHOOK_ALLOWED_TARGETS: allowed }).webhooks;

async function refusal(url: string, allowed?: string): Promise<string> {
  try {
    await checkWebhookUrl(url, webhooks(allowed), { org: 'org-a' });
    return 'allowed';
  } catch (err) {
    if (err instanceof WebhookTargetRefused) return `${err.reason}: ${err.message}`;
    throw err;
  }
}

describe('webhook targets', () => {
  it.each([
    ['http://127.0.0.1/x', 'loopback'],
    ['http://127.3.4.5:8080/x', 'loopback'],
    ['http://[::1]/x', 'loopback'],
    ['http://10.1.2.3/x', 'private'],
    ['http://172.20.0.1/x', 'private'],
    ['http://192.168.1.1/x', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'link-local'],
    ['http://[fe80::1]/x', 'link-local'],
    ['http://[fd12:3456::1]/x', 'unique-local'],
    ['http://100.64.0.1/x', 'shared (CGNAT)'],
    ['http://224.0.0.1/x', 'multicast'],
    ['http://[ff02::1]/x', 'multicast'],
    ['http://0.0.0.0/x', 'unspecified'],
    ['http://[::]/x', 'unspecified'],
    ['http://[::ffff:127.0.0.1]/x', 'loopback'],
    ['http://[::ffff:a9fe:a9fe]/x', 'link-local'],
    ['http://[64:ff9b::10.0.0.1]/x', 'private'],
    ['http://[2002:c0a8:0101::1]/x', 'private'],
    ['http://2130706433/x', 'loopback'],
    ['http://0x7f.1/x', 'loopback'],
  ])('refuses %s (%s)', async (url, range) => {
    expect(await refusal(url)).toMatch(
      new RegExp(`^private_address: .* an? ${range.replace(/[()]/g, '\\$&')} address`),
    );
  });

  it('accepts public addresses, IPv4 and IPv6', async () => {
    expect(await refusal('https://93.184.215.14/hooks')).toBe('allowed');
    expect(await refusal('https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hooks')).toBe('allowed');
    expect(await refusal('https://8.8.8.8/hooks')).toBe('allowed');
  });

  it('refuses what is not an http(s) URL without credentials', async () => {
    expect(await refusal('ftp://93.184.215.14/x')).toBe('invalid_url: the URL must be http or https');
    expect(await refusal('file:///etc/passwd')).toBe('invalid_url: the URL must be http or https');
    expect(await refusal('https://user:pw@93.184.215.14/x')).toBe('invalid_url: the URL must not carry credentials');
    expect(await refusal('/relative')).toBe('invalid_url: the URL is not an absolute URL');
    expect(await refusal(`https://93.184.215.14/${'a'.repeat(2048)}`)).toMatch(/^invalid_url: the URL is longer/);
    expect(await refusal('https://no-such-host.invalid/x')).toBe(`unresolved: ${NOT_REACHABLE}`);
    expect(await refusal('https://localhost:8443/x')).toBe(`private_address: ${NOT_REACHABLE}`);
    expect(await refusal('http://93.184.215.14:0/x')).toBe("invalid_url: the URL's port must be 1 to 65535");
    expect(await refusal('http://localhost:0/x', 'localhost')).toBe("invalid_url: the URL's port must be 1 to 65535");
  });

  it('lets the allow-list name an address, a block or a host, and nothing more', async () => {
    expect(await refusal('http://127.0.0.1:9/x', '127.0.0.1')).toBe('allowed');
    expect(await refusal('http://[::ffff:127.0.0.1]/x', '127.0.0.1')).toBe('allowed');
    expect(await refusal('https://localhost/x', '127.0.0.1')).toBe('allowed');
    expect(await refusal('http://127.0.0.2/x', '127.0.0.1')).toMatch(/loopback/);
    expect(await refusal('http://[::1]/x', '127.0.0.1')).toMatch(/loopback/);
    expect(await refusal('http://10.9.8.7/x', '127.0.0.1')).toMatch(/private/);
    expect(await refusal('http://10.9.8.7/x', '10.0.0.0/8, fd00::/8')).toBe('allowed');
    expect(await refusal('http://[fd00::5]/x', '10.0.0.0/8, fd00::/8')).toBe('allowed');
    expect(await refusal('http://[fd01::5]/x', '10.0.0.0/8, fd00::/16')).toMatch(/unique-local/);
    expect(await refusal('https://LOCALHOST/x', 'localhost')).toBe('allowed');
    expect(await refusal('http://127.0.0.1/x', 'localhost')).toMatch(/loopback/);
  });

  it('refuses a bad allow-list at start-up, naming the variable', () => {
    for (const bad of ['10.0.0.0/33', '::/129', 'bad host!', '10.0.0.0/8/1', 'host/8'])
      expect(() => loadConfig({ WEBHOOK_ALLOWED_TARGETS: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_SIGNING_KEY: 'short' })).toThrow(/WEBHOOK_SIGNING_KEY must be at least 32/);
  });

  it('derives each subscription secret from the key and its salt, usable by standardwebhooks', () => {
    const key = 'k'.repeat(32);
    const secret = subscriptionSecret(key, 'salt-1');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(subscriptionSecret(key, 'salt-1')).toBe(secret);
    expect(subscriptionSecret(key, 'salt-2')).not.toBe(secret);
    expect(subscriptionSecret('j'.repeat(32), 'salt-1')).not.toBe(secret);
    const at = new Date();
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_1', at, '{"a":1}'),
    };
    expect(new Webhook(secret).verify('{"a":1}', headers)).toEqual({ a: 1 });
    expect(() => new Webhook(subscriptionSecret(key, 'salt-2')).verify('{"a":1}', headers)).toThrow();
  });
});

describe('webhook attempts and their targets', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => receiver.close());
  const send = (url: string, allowed: string | undefined, lookup: { resolve?: Resolve } = {}) =>
    sendWebhook(url, { 'webhook-id': 'msg_x' }, '{}', {
      rules: targetRules(webhooks(allowed)),
      timeoutMs: 5000,
      lookup: { org: 'org-a', ...lookup },
    });

  it('refuses at the attempt too: nothing reaches a loopback receiver unless allowed', async () => {
    const before = receiver.received.length;
    expect(await send(receiver.url, undefined)).toMatchObject({ ok: false, failure: 'refused' });
    expect(await send(receiver.url.replace('127.0.0.1', 'localhost'), undefined)).toMatchObject({
      ok: false,
      failure: 'refused',
    });
    expect(receiver.received.length).toBe(before);
    expect(await send(receiver.url, '127.0.0.1')).toEqual({ ok: true, status: 204 });
    expect(receiver.received.length).toBe(before + 1);
  });

  it('connects to the address it checked, whatever DNS answers after', async () => {
    // A name whose first answer is the allowed receiver and every later one a private address
    // (DNS rebinding): the attempt resolves once and connects where the check said.
    let answers = 0;
    const resolve = async () => [{ address: answers++ === 0 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
    const before = receiver.received.length;
    const url = `http://rebinding.test:${receiver.port}/hooks`;
    expect(await send(url, '127.0.0.1', { resolve })).toEqual({ ok: true, status: 204 });
    expect(answers).toBe(1);
    expect(receiver.received.at(before)?.headers.host).toBe(`rebinding.test:${receiver.port}`);
    // A name with a private address among its answers is refused, whichever comes first.
    const mixed = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ];
    expect(await send(url, '127.0.0.1', { resolve: mixed })).toMatchObject({ ok: false, failure: 'refused' });
  });
});
