/**
 * What every handler receives: the caller, its authorization (loaded once, on first use), the
 * stores, and the request's deadline. Built once per request by the transport (REST or GraphQL),
 * so both share loaders and access for one request. Knows nothing of HTTP.
 */
import { loadAccess, type Access } from './auth/access.ts';
import type { Caller } from './auth/caller.ts';
import type { Config } from './config.ts';
import { createLoaders, type Loaders } from './loaders.ts';
import type { InsightStore } from './store/insight-port.ts';
import type { RegistryStore } from './store/registry-port.ts';
import type { TraceStore } from './store/trace-port.ts';
import type { Metrics } from './observability/metrics.ts';
import { checkDeadline, type Deadline } from './shared/deadline.ts';
import type { LimitedOperation, Quota, RateLimits } from './rate-limits.ts';
import type { IngestQuota, IngestQuotas, IngestUsage, IngestVerdict } from './otlp/ingest-quotas.ts';
import type { WebhookGuard } from './insights/webhook-subscriptions.ts';

/** The long-lived parts of the service, built by main.ts (or a test) and handed to buildApp. */
export interface Services {
  config: Config;
  registry: RegistryStore;
  traces: TraceStore;
  /** The signing secrets of webhook subscriptions and where their deliveries may go; without it none can be created. */
  webhooks?: WebhookGuard;
  /** Present when the process exports metrics (main.ts); counters are skipped otherwise. */
  metrics?: Metrics;
}

export interface RequestContext {
  readonly caller: Caller;
  readonly services: Services;
  readonly registry: RegistryStore;
  readonly traces: TraceStore;
  /** Insights, webhook subscriptions and their deliveries: the registry store's (in its engine). */
  readonly insights: InsightStore;
  /** W3C trace id of the request. */
  readonly traceId: string;
  /** Aborted at the request deadline; store work listens to it. */
  readonly signal: AbortSignal;
  /** Throws 504 request_timeout once the deadline has passed: handlers call it between steps. */
  checkDeadline(): void;
  /**
   * Runs the request's write: `signal` withdraws it at the deadline while it waits for its turn
   * (the store rejects with QueryCancelledError, nothing stored); once it has begun, the request
   * waits for its outcome and answers with it, past the deadline if need be (DESIGN §12: an answer
   * never reports an error for data that was stored).
   */
  write<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /**
   * The registry's generation as this request first read it: the response cache and the org tree
   * cache compare the same value, one store call per request.
   */
  generation(): Promise<string>;
  access(): Promise<Access>;
  /** Counts calls (default one) of a rate-limited operation for this caller (every transport spends the same quota). */
  spendQuota(operation: LimitedOperation, calls?: number): Promise<Quota>;
  /** Counts an OTLP request against this caller's and its organization's ingestion quotas. */
  spendIngestQuotas(usage: IngestUsage): Promise<IngestVerdict>;
  /** The ingestion quota of this caller or its organization spent already (asked before a body is read), or null. */
  ingestQuotaSpent(): Promise<IngestQuota | null>;
  /** The request's DataLoader set, created on first use and shared by every transport. */
  readonly loaders: Loaders;
  /**
   * The base (no trailing slash) of the absolute URLs an answer carries: PUBLIC_BASE_URL, else the
   * request's validated origin (shared/base-url.ts); throws 400 invalid_request when it has none.
   */
  baseUrl(): string;
}

export function createContext(
  services: Services,
  caller: Caller,
  traceId: string,
  deadline: Deadline,
  rateLimits: RateLimits,
  ingestQuotas: IngestQuotas,
  baseUrl: () => string,
): RequestContext {
  let access: Promise<Access> | undefined;
  let generation: Promise<string> | undefined;
  let loaders: Loaders | undefined;
  return {
    caller,
    services,
    registry: services.registry,
    traces: services.traces,
    insights: services.registry.insights,
    traceId,
    signal: deadline.signal,
    checkDeadline: () => checkDeadline(deadline),
    write: (work) => {
      checkDeadline(deadline);
      deadline.answerAfterWrite();
      return work(deadline.signal);
    },
    generation() {
      generation ??= services.registry.generation();
      return generation;
    },
    access() {
      access ??= loadAccess(services.registry, caller, () => this.generation());
      return access;
    },
    spendQuota: (operation, calls) => rateLimits.spend(caller, operation, calls),
    spendIngestQuotas: (usage) => ingestQuotas.spend(caller, usage),
    ingestQuotaSpent: () => ingestQuotas.spent(caller),
    baseUrl,
    get loaders() {
      loaders ??= createLoaders(
        services.registry,
        caller.orgId,
        async () => (await this.access()).readableWorkspaceIds,
      );
      return loaders;
    },
  };
}
