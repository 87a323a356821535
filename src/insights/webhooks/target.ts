/**
 * Where a webhook may be sent: an http or https URL without credentials whose host resolves only
 * to public addresses, unless WEBHOOK_ALLOWED_TARGETS names the host or a block holding the
 * address. Checked when a subscription is created and again before every attempt (DNS can
 * change); the attempt then connects to the very address checked (send.ts pins it).
 */
import dns from 'node:dns/promises';
import type { WebhookConfig } from '../../config-webhooks.ts';
import { addressBytes, inBlock, parseBlock, refusedRange, unmapped, type Block } from './addresses.ts';

export type RefusalReason = 'invalid_url' | 'unresolved' | 'private_address';

/** The URL may not be used (or, `unresolved`, not now); the message says why, for the subscriber. */
export class WebhookTargetRefused extends Error {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface TargetRules {
  allowedHosts: ReadonlySet<string>;
  allowedBlocks: readonly Block[];
}

/** A URL checked: the address (and its family) the attempt connects to. */
export interface ResolvedTarget {
  url: URL;
  /** The host name as the URL gives it, without the brackets of an IPv6 literal. */
  host: string;
  address: string;
  family: 4 | 6;
}

const MAX_URL_LENGTH = 2048;

const rulesOf = new WeakMap<object, TargetRules>();

/** The allow-list of the configuration, parsed once per configuration object. */
export function targetRules(config: Pick<WebhookConfig, 'allowedHosts' | 'allowedBlocks'>): TargetRules {
  let rules = rulesOf.get(config);
  if (rules === undefined) {
    rules = {
      allowedHosts: new Set(config.allowedHosts),
      allowedBlocks: config.allowedBlocks.map((b) => parseBlock(b.address, b.prefix)),
    };
    rulesOf.set(config, rules);
  }
  return rules;
}

/** The URL parsed and checked for its form: http(s), no credentials, bounded length. */
function webhookUrl(text: string): URL {
  if (text.length > MAX_URL_LENGTH)
    throw new WebhookTargetRefused('invalid_url', `the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookTargetRefused('invalid_url', 'the URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new WebhookTargetRefused('invalid_url', 'the URL must be http or https');
  if (url.username !== '' || url.password !== '')
    throw new WebhookTargetRefused('invalid_url', 'the URL must not carry credentials');
  return url;
}

/** Every address of a host name (the system's resolver: dns.lookup). */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolve = (host) => dns.lookup(host, { all: true, order: 'verbatim' });

async function addressesOf(host: string, resolve: Resolve): Promise<{ address: string; family: number }[]> {
  if (addressBytes(host) !== null) return [{ address: host, family: host.includes(':') ? 6 : 4 }];
  try {
    return await resolve(host);
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'an error';
    throw new WebhookTargetRefused('unresolved', `the host ${host} does not resolve (${code})`);
  }
}

/**
 * Checks `text` and resolves its host; throws WebhookTargetRefused when it may not be used. Every
 * address the host resolves to must be allowed (a name with one private address among public ones
 * is refused), and the first is the one to connect to.
 */
export async function resolveWebhookTarget(
  text: string,
  rules: TargetRules,
  resolve: Resolve = systemResolve,
): Promise<ResolvedTarget> {
  const url = webhookUrl(text);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = await addressesOf(host, resolve);
  const first = addresses[0];
  if (first === undefined) throw new WebhookTargetRefused('unresolved', `the host ${host} has no address`);
  if (!rules.allowedHosts.has(host.toLowerCase().replace(/\.$/, '')))
    for (const { address } of addresses) {
      const bytes = addressBytes(address);
      if (bytes === null) throw new WebhookTargetRefused('unresolved', `the host ${host} resolved to ${address}`);
      if (rules.allowedBlocks.some((b) => inBlock(bytes, b) || inBlock(unmapped(bytes), b))) continue;
      const range = refusedRange(bytes);
      if (range !== null)
        throw new WebhookTargetRefused(
          'private_address',
          `the host ${host} resolves to ${address}, a ${range} address; webhooks go to public addresses only`,
        );
    }
  return { url, host, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/**
 * For the subscription's creation: throws WebhookTargetRefused (with a message for the caller)
 * unless `url` may receive webhooks now.
 */
export async function checkWebhookUrl(
  url: string,
  config: Pick<WebhookConfig, 'allowedHosts' | 'allowedBlocks'>,
): Promise<void> {
  await resolveWebhookTarget(url, targetRules(config));
}
