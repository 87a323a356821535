/**
 * Per-tenant ingestion quotas (DESIGN §12): an OTLP request spends its records (spans, log records,
 * metric data points, as decoded) from per-second quotas and its bytes (the decompressed body, what
 * the receiver had to read) from per-UTC-day quotas, of its caller and of its organization, after
 * it is decoded and before anything of it is stored. The counters are the rate-limit port's
 * (Redis in server mode: replicas share them; fixed windows).
 *
 * A request over any quota is refused whole (429 `rate_limited` with Retry-After, OTLP's retryable
 * answer). Its bytes are given back to the day's counters (an exporter retrying a refused request
 * is not charged the day's bytes twice), its records are not: they fill the second's window, so
 * that a caller (or organization) whose second or day is spent is refused before its next body is
 * even read (`spent`), and refused requests cannot keep the decoding threads busy: at most about
 * one body over the per-second quota is decoded a second. Counting then refunding keeps each
 * counter atomic on its own across replicas; requests racing at a limit may all be refused where
 * one would have fit, never all admitted. An admitted request stays counted whatever happens to it
 * next. When the counter store cannot answer, requests are admitted, as with the per-minute limits
 * (the quota protects the service; a counter outage must not stop ingestion).
 */
import { callerKey, type Caller } from '../auth/caller.ts';
import type { IngestQuotaLimits } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { RateLimitHit, RateLimiter } from '../store/rate-limit-port.ts';

/** What one request spends. */
export interface IngestUsage {
  records: number;
  bytes: number;
}

/** One quota as a request left it. */
export interface IngestQuota {
  /** `caller-records`, `caller-bytes`, `org-records` or `org-bytes`. */
  name: string;
  limit: number;
  windowS: number;
  /** What is left in the window after this request (after its refund when it was refused). */
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetS: number;
  exceeded: boolean;
}

export interface IngestVerdict {
  /** The quotas in force (a quota set to 0 is off and absent). */
  quotas: IngestQuota[];
  /** The quota that refused the request, the one that resets last when several did; null: admitted. */
  refused: IngestQuota | null;
}

const SECOND_MS = 1000;
const DAY_MS = 86_400_000;

interface Counter {
  name: string;
  key: string;
  limit: number;
  windowMs: number;
  unit: keyof IngestUsage;
}

export class IngestQuotas {
  private readonly limiter: RateLimiter;
  private readonly limits: IngestQuotaLimits;

  constructor(limiter: RateLimiter, limits: IngestQuotaLimits) {
    this.limiter = limiter;
    this.limits = limits;
  }

  private counters(caller: Caller): Counter[] {
    const who = `ingest|caller|${callerKey(caller)}`;
    const org = `ingest|org|${caller.orgId}`;
    const l = this.limits;
    const all: Counter[] = [
      {
        name: 'caller-records',
        key: `${who}|records`,
        limit: l.callerRecordsPerS,
        windowMs: SECOND_MS,
        unit: 'records',
      },
      { name: 'caller-bytes', key: `${who}|bytes`, limit: l.callerBytesPerDay, windowMs: DAY_MS, unit: 'bytes' },
      { name: 'org-records', key: `${org}|records`, limit: l.orgRecordsPerS, windowMs: SECOND_MS, unit: 'records' },
      { name: 'org-bytes', key: `${org}|bytes`, limit: l.orgBytesPerDay, windowMs: DAY_MS, unit: 'bytes' },
    ];
    return all.filter((c) => c.limit > 0);
  }

  /**
   * Counts `usage` for `caller` and its organization; a refused request's bytes are refunded
   * before this answers, its records are not (see above).
   */
  async spend(caller: Caller, usage: IngestUsage): Promise<IngestVerdict> {
    const counters = this.counters(caller);
    const hits = await Promise.all(counters.map((c) => this.limiter.hit(c.key, c.windowMs, usage[c.unit])));
    const over = counters.some((c, i) => (hits[i] as RateLimitHit).count > c.limit);
    const refunded = (c: Counter) => (over && c.unit === 'bytes' ? usage.bytes : 0);
    // What is left is told after the refund: a smaller request may still fit in the day.
    const quotas = counters.map((c, i) => quotaOf(c, hits[i] as RateLimitHit, refunded(c)));
    if (over) {
      await Promise.all(
        counters.flatMap((c, i) =>
          refunded(c) > 0
            ? [this.limiter.refund(c.key, c.windowMs, (hits[i] as RateLimitHit).windowStart, refunded(c))]
            : [],
        ),
      );
    }
    return { quotas, refused: latest(quotas.filter((q) => q.exceeded)) };
  }

  /**
   * The quota of `caller` or its organization that is spent already (its window full), or null:
   * asked before a request's body is read, which then costs nothing of the service's.
   */
  async spent(caller: Caller): Promise<IngestQuota | null> {
    const counters = this.counters(caller);
    const hits = await Promise.all(counters.map((c) => this.limiter.hit(c.key, c.windowMs, 0)));
    const full = counters
      .map((c, i) => ({ c, hit: hits[i] as RateLimitHit }))
      .filter(({ c, hit }) => hit.count >= c.limit)
      .map(({ c, hit }) => ({ ...quotaOf(c, hit, 0), exceeded: true }));
    return latest(full);
  }
}

/** The quota of `quotas` that resets last (a request must wait for all of them), or null. */
function latest(quotas: IngestQuota[]): IngestQuota | null {
  let last: IngestQuota | null = null;
  for (const q of quotas) if (last === null || q.resetS > last.resetS) last = q;
  return last;
}

function quotaOf(c: Counter, hit: RateLimitHit, refunded: number): IngestQuota {
  return {
    name: c.name,
    limit: c.limit,
    windowS: c.windowMs / 1000,
    remaining: Math.max(0, c.limit - (hit.count - refunded)),
    resetS: Math.max(1, Math.ceil(hit.resetMs / 1000)),
    exceeded: hit.count > c.limit,
  };
}

const WHAT: Record<string, string> = {
  'caller-records': 'records a second for this caller',
  'caller-bytes': 'bytes a day (UTC) for this caller',
  'org-records': 'records a second for this organization',
  'org-bytes': 'bytes a day (UTC) for this organization',
};

/** 429 rate_limited for a request over an ingestion quota, with the seconds until it resets. */
export function ingestQuotaError(quota: IngestQuota): ApiError {
  return new ApiError(
    'rate_limited',
    `over the ingestion quota of ${quota.limit} ${WHAT[quota.name] ?? quota.name}; nothing of the request was stored; retry in ${quota.resetS} s`,
    { retryAfter: quota.resetS },
  );
}
