/**
 * Where a webhook may be sent: an http or https URL without credentials whose host resolves only
 * to public addresses, unless WEBHOOK_ALLOWED_TARGETS names the host or a block holding the
 * address. Checked when a subscription is created and again before every attempt (DNS can
 * change); the attempt then connects to the very address checked (send.ts pins it).
 */
import type { WebhookConfig } from '../../config-webhooks.ts';
import { addressBytes, inBlock, parseBlock, refusedRange, unmapped, type Block } from './addresses.ts';
import { LookupBusy, LookupTimedOut, systemGate, systemResolve, type LookupGate, type Resolve } from './lookup.ts';

/** `busy`: the host's lookup did not start, no lookup slot being free for it (lookup.ts). */
export type RefusalReason = 'invalid_url' | 'unresolved' | 'private_address' | 'busy';

/**
 * The URL may not be used (or, `unresolved` and `busy`, not now). The message is for the subscriber and says
 * nothing of what the resolver answered (no address, no error code): creating subscriptions must
 * not tell what names mean inside the service's network. `detail` says it, for the service's log.
 */
export class WebhookTargetRefused extends Error {
  readonly reason: RefusalReason;
  readonly detail: string;
  constructor(reason: RefusalReason, message: string, detail = message) {
    super(message);
    this.reason = reason;
    this.detail = detail;
  }
}

export interface TargetRules {
  allowedHosts: ReadonlySet<string>;
  allowedBlocks: readonly Block[];
  /** A lookup of the host is cut after this long (WEBHOOK_LOOKUP_TIMEOUT_MS). */
  lookupTimeoutMs: number;
}

/** Whose lookup it is and where it goes: the system's resolver and the process's gate, unless a test gives its own. */
export interface TargetLookup {
  /** The organization of the subscription: the gate's key (one organization never holds every slot). */
  org: string;
  resolve?: Resolve;
  gate?: LookupGate;
  /** How long the lookup may wait for a slot (the rules' timeout unless said). */
  waitMs?: number;
  /** Hears when the host's lookup starts, its slot taken (not called for an address the URL gives). */
  started?: () => void;
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

/** What of the configuration the check reads. */
type TargetConfig = Pick<WebhookConfig, 'allowedHosts' | 'allowedBlocks' | 'lookupTimeoutMs'>;

const rulesOf = new WeakMap<object, TargetRules>();

/** The allow-list of the configuration, parsed once per configuration object. */
export function targetRules(config: TargetConfig): TargetRules {
  let rules = rulesOf.get(config);
  if (rules === undefined) {
    rules = {
      allowedHosts: new Set(config.allowedHosts),
      allowedBlocks: config.allowedBlocks.map((b) => parseBlock(b.address, b.prefix)),
      lookupTimeoutMs: config.lookupTimeoutMs,
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
  if (url.port === '0') throw new WebhookTargetRefused('invalid_url', "the URL's port must be 1 to 65535");
  return url;
}

/** What a subscriber is told of a name that does not resolve, or not to addresses webhooks may reach: the same for both. */
const NOT_REACHABLE =
  "the URL's host does not resolve, or resolves to an address webhooks may not reach (see WEBHOOK_ALLOWED_TARGETS)";

async function addressesOf(
  host: string,
  rules: TargetRules,
  lookup: TargetLookup,
): Promise<{ address: string; family: number }[]> {
  if (addressBytes(host) !== null) return [{ address: host, family: host.includes(':') ? 6 : 4 }];
  const { org, resolve = systemResolve, gate = systemGate, waitMs, started } = lookup;
  try {
    return await gate.run(org, () => resolve(host), { timeoutMs: rules.lookupTimeoutMs, waitMs, started });
  } catch (err) {
    if (err instanceof LookupTimedOut)
      throw new WebhookTargetRefused(
        'unresolved',
        `the URL's host did not resolve within ${rules.lookupTimeoutMs} ms; try again later`,
        `the lookup of ${host} had no answer within ${rules.lookupTimeoutMs} ms`,
      );
    if (err instanceof LookupBusy)
      throw new WebhookTargetRefused(
        'busy',
        "the URL's host could not be looked up now: too many lookups are under way; try again later",
        `the lookup of ${host} did not start: ${err.message}`,
      );
    const code = (err as { code?: string }).code ?? String(err);
    throw new WebhookTargetRefused('unresolved', NOT_REACHABLE, `the lookup of ${host} failed: ${code}`);
  }
}

/**
 * Checks `text` and resolves its host; throws WebhookTargetRefused when it may not be used. Every
 * address the host resolves to must be allowed (a name with one private address among public ones
 * is refused), and the first is the one to connect to. The lookup goes through the gate under the
 * organization's key, cut at the rules' timeout. An address the URL itself gives is named in the refusal (the caller wrote it);
 * what a name resolves to is not.
 */
export async function resolveWebhookTarget(
  text: string,
  rules: TargetRules,
  lookup: TargetLookup,
): Promise<ResolvedTarget> {
  const url = webhookUrl(text);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = addressBytes(host) !== null;
  const addresses = await addressesOf(host, rules, lookup);
  const first = addresses[0];
  if (first === undefined) throw new WebhookTargetRefused('unresolved', NOT_REACHABLE, `${host} has no address`);
  if (!rules.allowedHosts.has(host.toLowerCase().replace(/\.$/, '')))
    for (const { address } of addresses) {
      const bytes = addressBytes(address);
      if (bytes === null)
        throw new WebhookTargetRefused('unresolved', NOT_REACHABLE, `${host} resolved to ${address}, not an address`);
      if (rules.allowedBlocks.some((b) => inBlock(bytes, b) || inBlock(unmapped(bytes), b))) continue;
      const range = refusedRange(bytes);
      if (range === null) continue;
      const kind = `${/^(?:unspecified|IPv4)/.test(range) ? 'an' : 'a'} ${range} address`;
      throw new WebhookTargetRefused(
        'private_address',
        literal
          ? `the URL's address ${address} is ${kind}; webhooks go to public addresses only (see WEBHOOK_ALLOWED_TARGETS)`
          : NOT_REACHABLE,
        `${host} resolves to ${address}, ${kind}`,
      );
    }
  return { url, host, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/**
 * For the subscription's creation: throws WebhookTargetRefused (with a message for the caller)
 * unless `url` may receive webhooks now.
 */
export async function checkWebhookUrl(url: string, config: TargetConfig, lookup: TargetLookup): Promise<void> {
  await resolveWebhookTarget(url, targetRules(config), lookup);
}
