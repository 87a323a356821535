/**
 * Key sets the verifier trusts. A remote JWKS is fetched with a timeout, refreshed on an unknown
 * `kid` at most once per cooldown, and its last good copy keeps serving for `staleMs` while the
 * endpoint fails. Keys are only ever taken from configuration: never from a token's `jku`,
 * `x5u`, `jwk` or `x5c`.
 */
import type { JWK } from 'jose';
import { ApiError } from '../errors.ts';

export interface KeySet {
  /** Keys for this kid; refreshes (rate-limited) when the kid is unknown. Throws auth_unavailable. */
  find(kid: string | undefined): Promise<JWK[]>;
}

export class StaticKeySet implements KeySet {
  private readonly keys: JWK[];
  constructor(keys: JWK[]) {
    this.keys = keys;
  }
  async find(kid: string | undefined): Promise<JWK[]> {
    return this.keys.filter((k) => kid === undefined || k.kid === kid);
  }
}

export interface RemoteKeySetOptions {
  cooldownMs?: number;
  staleMs: number;
  timeoutMs?: number;
  /** Max age of a good copy before a background-free refresh on next use. */
  maxAgeMs?: number;
  now?: () => number;
  onFetch?: (outcome: 'ok' | 'error') => void;
}

export class RemoteKeySet implements KeySet {
  private readonly url: string;
  private readonly opts: Required<Omit<RemoteKeySetOptions, 'onFetch'>> & Pick<RemoteKeySetOptions, 'onFetch'>;
  private keys: JWK[] | null = null;
  private fetchedAt = 0;
  private lastAttempt = -Infinity;
  private inflight: Promise<void> | null = null;

  constructor(url: string, options: RemoteKeySetOptions) {
    this.url = url;
    this.opts = { cooldownMs: 30_000, timeoutMs: 3_000, maxAgeMs: 600_000, now: Date.now, ...options };
  }

  private async fetchKeys(): Promise<void> {
    this.lastAttempt = this.opts.now();
    try {
      const res = await fetch(this.url, { signal: AbortSignal.timeout(this.opts.timeoutMs), redirect: 'error' });
      if (!res.ok) throw new Error(`JWKS endpoint answered ${res.status}`);
      const body = (await res.json()) as { keys?: unknown };
      if (!Array.isArray(body.keys)) throw new Error('JWKS has no keys array');
      this.keys = body.keys.filter(
        (k): k is JWK => k !== null && typeof k === 'object' && typeof (k as JWK).kty === 'string',
      );
      this.fetchedAt = this.opts.now();
      this.opts.onFetch?.('ok');
    } catch {
      this.opts.onFetch?.('error');
    }
  }

  private refresh(): Promise<void> {
    this.inflight ??= this.fetchKeys().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private usable(): JWK[] | null {
    if (this.keys === null) return null;
    return this.opts.now() - this.fetchedAt <= this.opts.maxAgeMs + this.opts.staleMs ? this.keys : null;
  }

  async find(kid: string | undefined): Promise<JWK[]> {
    const now = this.opts.now();
    const cooled = now - this.lastAttempt >= this.opts.cooldownMs;
    const old = this.keys === null || now - this.fetchedAt > this.opts.maxAgeMs;
    if (old && cooled) await this.refresh();
    let keys = this.usable();
    if (keys === null) throw new ApiError('auth_unavailable', 'the signing keys of the issuer cannot be fetched');
    const match = (set: JWK[]) => set.filter((k) => kid === undefined || k.kid === kid);
    if (match(keys).length === 0 && this.opts.now() - this.lastAttempt >= this.opts.cooldownMs) {
      await this.refresh();
      keys = this.usable() ?? keys;
    }
    return match(keys);
  }
}
