/**
 * The insight store port: insights computed from telemetry, the webhook subscriptions that want
 * them, and the outbox their deliveries leave from. Part of the registry store's engine (SQLite
 * embedded, PostgreSQL in server mode; `RegistryStore.insights`), so that an insight and the
 * deliveries it owes commit in one transaction. The contract suites (test/contract/insight-contract.ts,
 * outbox-contract.ts) run against both engines.
 *
 * Invariants every engine keeps:
 * - an insight is immutable and its id deterministic: recording one whose id is stored already
 *   changes nothing (no second record, no second delivery);
 * - a delivery is enqueued in the transaction that stores its insight, so a crash loses none;
 *   a claimed delivery not completed before its lease ends is claimed again (at least once);
 * - a subscription has at most one delivery leased at a time;
 * - lists are ordered deterministically and page by keyset.
 */

export const INSIGHT_KINDS = [
  'usage_summary',
  'tool_failure_hotspot',
  'latency_regression',
  'cost_spike',
  'token_efficiency',
  'evaluation_drop',
] as const;
export type InsightKind = (typeof INSIGHT_KINDS)[number];

/** What an insight is about: a registry skill or agent (by id), or a tool (by name, with its MCP server). */
export type InsightSubject =
  { type: 'skill'; id: string } | { type: 'agent'; id: string } | { type: 'tool'; id: string; server: string | null };

export interface InsightRecord {
  /** Deterministic: the same (org, workspace, kind, subject, window) always gives the same id. */
  id: string;
  org_id: string;
  /** The workspace whose spans the insight was computed from; readers must be able to read it. */
  workspace_id: string;
  kind: InsightKind;
  subject: InsightSubject;
  /** Unix seconds, [start, end). */
  window_start_s: number;
  window_end_s: number;
  /** Valid against operation 4's schema of `kind`. */
  payload: Record<string, unknown>;
  /** When it was detected, ISO 8601 UTC with milliseconds. */
  created_at: string;
}

export interface InsightQuery {
  orgId: string;
  /** Only insights of these workspaces (the caller's readable scope). Empty -> none. */
  workspaceIds: readonly string[];
  /** Only insights about this subject (tool subjects match on id and server). */
  subject?: InsightSubject;
  kinds?: readonly InsightKind[];
  /** Only insights whose window ends after this time (Unix seconds). */
  sinceS?: number;
  /** Newest first: ordered by window_end_s desc, then id asc; keyset after this one. */
  after?: InsightPosition;
  limit: number;
}

/**
 * One series of insights: those of one organization, workspace, kind and subject told apart only
 * by their windows. `detail` is what else tells them apart: an `evaluation_drop`'s evaluation name
 * (its payload's `evaluation_name`), null for the other kinds.
 */
export interface InsightSeries {
  orgId: string;
  workspaceId: string;
  kind: InsightKind;
  subject: InsightSubject;
  detail: string | null;
}

/** Where a page of a list ends: the sort key of its last insight (newest window first, then id). */
export interface InsightPosition {
  window_end_s: number;
  id: string;
}

/**
 * One page of {@link InsightPagesQuery}: the insights of the workspaces of `scopes[scope]`, about
 * `subject` when given, after `after`.
 */
export interface InsightPageRequest {
  scope: number;
  subject?: InsightSubject;
  after?: InsightPosition;
}

/**
 * Pages of several lists at once (the insights of each skill of a GraphQL list, the feed of each
 * workspace), sharing organization, kinds, since and page size: one statement whatever the number
 * of pages (two when subject and feed pages come together).
 */
export interface InsightPagesQuery {
  orgId: string;
  /** The workspace lists the pages read, named by index: a scope many pages share is bound once. */
  scopes: readonly (readonly string[])[];
  pages: readonly InsightPageRequest[];
  kinds?: readonly InsightKind[];
  sinceS?: number;
  /** At most this many insights per page. */
  limit: number;
}

/** Why a subscription was not stored: its workspace holds `max` already (`held` of them). */
export interface SubscriptionsFull {
  held: number;
}

export interface WebhookSubscription {
  id: string;
  org_id: string;
  workspace_id: string;
  url: string;
  /** Only these kinds; empty: every kind. */
  kinds: readonly InsightKind[];
  /** Only insights about these subjects (a tool matches on id and server); empty: every subject of the workspace. */
  subjects: readonly InsightSubject[];
  /** The user who created it; deliveries stop at what this user can read. */
  created_by: string;
  created_at: string;
  /**
   * What the signing secret is derived from (never the secret itself): the service derives the
   * secret from its key and this salt, shows it once at creation and signs with it.
   */
  secret_salt: string;
}

/** One delivery owed: an insight to one subscription. Its id is the `webhook-id` of every attempt. */
export interface Delivery {
  id: string;
  /** The organization of its subscription and insight. */
  org_id: string;
  subscription_id: string;
  insight_id: string;
  attempts: number;
  /** Unix milliseconds of the next attempt. */
  next_attempt_ms: number;
  /** Unix milliseconds when it was enqueued (retries stop a bounded time after). */
  enqueued_ms: number;
}

/** What one organization may owe the outbox (config-webhooks.ts `maxOwedPerOrg`). */
export interface OutboxBound {
  /** Deliveries an organization may owe at once; one past it is not enqueued. */
  maxOwedPerOrg: number;
  /** Hears, once the insights are committed, how many deliveries of an organization were not enqueued. */
  refused(orgId: string, deliveries: number): void;
}

/** A subscription's pause: until when, and which of its deliveries it gives up. */
export interface SubscriptionPause {
  nowMs: number;
  /** None of its deliveries is claimed before this. */
  untilMs: number;
  /** Its deliveries enqueued before this and not leased at `nowMs` are given up (removed). */
  giveUpEnqueuedBeforeMs: number;
}

/**
 * The outbox the webhook worker drains, fair across organizations and subscriptions: one slow or
 * failing receiver holds at most one delivery in flight, and a subscription that keeps failing is
 * paused rather than claimed.
 */
export interface WebhookOutbox {
  /**
   * Up to `limit` deliveries due at `nowMs`, each leased to the caller until `nowMs + leaseMs`
   * (another claimer skips it until then). At most one per subscription, its oldest due (by next
   * attempt, then id), and none of a subscription that has one leased or is paused at `nowMs`;
   * organizations take turns: the oldest of each organization's subscriptions first, then the
   * next of each, and so on. Claims at once, on any replica, never leave two of one subscription
   * leased. Answered oldest due first.
   */
  claimDeliveries(nowMs: number, leaseMs: number, limit: number): Promise<Delivery[]>;
  /** The delivery succeeded (or was given up): it is removed. */
  completeDelivery(id: string): Promise<void>;
  /** The attempt failed: count it and try again at `nextAttemptMs` (its lease ends). */
  retryDelivery(id: string, nextAttemptMs: number): Promise<void>;
  /** The attempt never started (no lookup slot free): try again at `nextAttemptMs`, not counted (its lease ends). */
  postponeDelivery(id: string, nextAttemptMs: number): Promise<void>;
  /** Deliveries owed, due or not (the outbox's depth, for /metrics). */
  countDeliveries(): Promise<number>;
  /**
   * Counts an attempt against its subscription: a success clears its consecutive failures (and
   * any pause), a failure adds one. Answers the consecutive failures now counted (0 when the
   * subscription is gone).
   */
  recordAttempt(subscriptionId: string, succeeded: boolean): Promise<number>;
  /** Pauses a subscription whose receiver keeps failing; answers how many deliveries it gave up. */
  pauseSubscription(subscriptionId: string, pause: SubscriptionPause): Promise<number>;
}

export interface InsightStore extends WebhookOutbox {
  /**
   * Stores the insights whose ids are not stored yet and, in the same transaction, one delivery
   * for each subscription of the insight's workspace whose kinds and subjects match (in
   * subscription creation order), except past `bound`: an organization owing `maxOwedPerOrg`
   * deliveries gets no more (its insights are stored all the same), counted and enqueued in one
   * serialized step, so writers at once, on any replica, never pass it. Answers the ids newly
   * stored.
   */
  recordInsights(insights: readonly InsightRecord[], nowMs: number, bound?: OutboxBound): Promise<string[]>;
  listInsights(query: InsightQuery): Promise<InsightRecord[]>;
  /**
   * One list of insights per page asked, in the order asked, each as {@link listInsights} answers
   * that page alone (an unknown scope index, an empty scope: an empty page).
   */
  listInsightPages(query: InsightPagesQuery): Promise<InsightRecord[][]>;
  getInsights(orgId: string, ids: readonly string[]): Promise<InsightRecord[]>;
  /**
   * The end of the newest window of the series' insights ending after `sinceS` (Unix seconds), or
   * null when none does: one index lookup, whatever the subject's other kinds and details hold
   * (detection's cooldown).
   */
  lastWindowEnd(series: InsightSeries, sinceS: number): Promise<number | null>;
  /**
   * Retention's batch: deletes at most `limit` insights whose window ends before `cutoffS` (the
   * oldest windows first), and with them the deliveries the outbox still owes for them, in one
   * short transaction. Answers the insights deleted (fewer than `limit`: none was left, or another
   * replica's batch holds the rest). Runs at once on several replicas never fail and never delete
   * an insight twice.
   */
  pruneInsights(cutoffS: number, limit: number): Promise<number>;

  /**
   * Stores it unless its workspace holds `max` subscriptions already (none: no cap): counted and
   * inserted in one serialized step, so creations at once, on any replica, never leave more than
   * `max`. Answers null when stored, else how many the workspace holds.
   */
  createSubscription(subscription: WebhookSubscription, max?: number): Promise<SubscriptionsFull | null>;
  /** Ordered by created_at, then id. */
  listSubscriptions(orgId: string, workspaceIds: readonly string[]): Promise<WebhookSubscription[]>;
  getSubscriptions(orgId: string, ids: readonly string[]): Promise<WebhookSubscription[]>;
  /** Deletes it and its pending deliveries; answers whether it existed. */
  deleteSubscription(orgId: string, id: string): Promise<boolean>;

  /**
   * Per-workspace overrides of detection's rules (names and numbers as src/insights defines them;
   * the store keeps them as given). Answers the organization's, by workspace id.
   */
  detectionSettings(orgId: string): Promise<Record<string, Record<string, number>>>;
  /** Replaces a workspace's overrides (an empty object: back to the defaults). */
  setDetectionSettings(orgId: string, workspaceId: string, settings: Record<string, number>): Promise<void>;

  /** Where detection left off in an organization (Unix seconds), or null before its first run. */
  detectionCursor(orgId: string): Promise<number | null>;
  setDetectionCursor(orgId: string, cursorS: number): Promise<void>;
  /**
   * Takes or renews a named lease for `holder` until `nowMs + ttlMs` when it is free, expired or
   * already the holder's; answers whether the holder has it (one replica at a time runs detection).
   */
  tryLease(name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean>;
}
