/**
 * Which addresses a webhook may reach (src/insights/webhooks/addresses.ts): the public Internet
 * only. Every special-purpose block is refused by name, with its first and last address; an IPv6
 * address carrying an IPv4 one (mapped, compatible, NAT64 64:ff9b::/96, 6to4) is judged by it,
 * and IPv6 outside global unicast is reserved. The addresses just outside each block are public.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { addressBytes, refusedRange } from '../../src/insights/webhooks/addresses.ts';
import { checkWebhookUrl, WebhookTargetRefused } from '../../src/insights/webhooks/target.ts';

const rangeOf = (address: string) => {
  const bytes = addressBytes(address);
  if (bytes === null) throw new Error(`not an address: ${address}`);
  return refusedRange(bytes);
};

const REFUSED: [string, string][] = [
  ['0.0.0.0', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['192.0.2.0', 'documentation'],
  ['192.0.2.255', 'documentation'],
  ['198.51.100.0', 'documentation'],
  ['198.51.100.255', 'documentation'],
  ['203.0.113.0', 'documentation'],
  ['203.0.113.255', 'documentation'],
  ['198.18.0.0', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['192.88.99.1', 'reserved'],
  ['240.0.0.0', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['127.0.0.1', 'loopback'],
  ['169.254.169.254', 'link-local'],
  // NAT64 local-use: refused whole, whatever IPv4 address it carries.
  ['64:ff9b:1::', 'NAT64 local-use'],
  ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'NAT64 local-use'],
  ['64:ff9b:1::808:808', 'NAT64 local-use'],
  // IPv4-translated ::ffff:0:a.b.c.d: refused whole, a public IPv4 address too.
  ['::ffff:0:0:0', 'IPv4-translated'],
  ['::ffff:0:8.8.8.8', 'IPv4-translated'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated'],
  ['2001:db8::', 'documentation'],
  ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001::1', 'Teredo'],
  ['2001:2::1', 'benchmarking'],
  // NAT64 64:ff9b::/96 is judged by the IPv4 address it carries.
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::a9fe:a9fe', 'link-local'],
  ['64:ff9b::10.1.2.3', 'private'],
  ['64:ff9b::ac10:1', 'private'],
  ['64:ff9b::c0a8:101', 'private'],
  ['64:ff9b::100.64.0.1', 'shared (CGNAT)'],
  ['64:ff9b::0.0.0.0', 'unspecified'],
  ['64:ff9b::192.0.2.1', 'documentation'],
  ['64:ff9b::198.18.0.1', 'benchmarking'],
  ['64:ff9b::255.255.255.255', 'broadcast'],
  ['::ffff:255.255.255.255', 'broadcast'],
  ['::ffff:203.0.113.7', 'documentation'],
  ['2002:c612:1::1', 'benchmarking'],
  // Outside global unicast (2000::/3): nothing public there.
  ['4000::1', 'reserved'],
  ['5f00::1', 'reserved'],
  ['e000::1', 'reserved'],
  ['64:ff9b:2::1', 'reserved'],
];

const PUBLIC = [
  '8.8.8.8',
  '93.184.215.14',
  '1.0.0.1',
  '192.0.1.255',
  '192.0.3.0',
  '198.17.255.255',
  '198.20.0.0',
  '198.51.99.255',
  '198.51.101.0',
  '203.0.112.255',
  '203.0.114.0',
  '223.255.255.255',
  '64:ff9b::8.8.8.8',
  '::ffff:8.8.8.8',
  '2002:808:808::1',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2001:1::1',
  '2001:db7:ffff::1',
  '2001:db9::1',
  '3fff:1000::1',
  '3ffe:ffff::1',
];

describe('webhook addresses', () => {
  it.each(REFUSED)('refuses %s (%s)', (address, range) => {
    expect(rangeOf(address)).toBe(range);
  });

  it.each(PUBLIC)('lets %s through (public)', (address) => {
    expect(rangeOf(address)).toBeNull();
  });

  it('refuses them in a URL too, naming the range of the address the URL gives', async () => {
    const config = loadConfig({}).webhooks;
    const refusal = async (url: string) => {
      try {
        await checkWebhookUrl(url, config, { org: 'org-a' });
        return 'allowed';
      } catch (err) {
        if (err instanceof WebhookTargetRefused) return `${err.reason}: ${err.message}`;
        throw err;
      }
    };
    expect(await refusal('https://203.0.113.10/x')).toBe(
      "private_address: the URL's address 203.0.113.10 is a documentation address; webhooks go to public addresses only (see WEBHOOK_ALLOWED_TARGETS)",
    );
    expect(await refusal('http://[64:ff9b::a00:1]/x')).toMatch(/is a private address/);
    expect(await refusal('http://[64:ff9b:1::808:808]/x')).toMatch(/is a NAT64 local-use address/);
    expect(await refusal('http://[::ffff:0:808:808]/x')).toMatch(/is an IPv4-translated address/);
    expect(await refusal('http://255.255.255.255/x')).toMatch(/is a broadcast address/);
    expect(await refusal('http://93.184.215.14:0/x')).toBe("invalid_url: the URL's port must be 1 to 65535");
    expect(await refusal('http://93.184.215.14:1/x')).toBe('allowed');
    expect(await refusal('http://93.184.215.14:65535/x')).toBe('allowed');
  });
});
