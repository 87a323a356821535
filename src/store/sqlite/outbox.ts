/**
 * The webhook outbox of the SQLite registry engine (insight-port.ts `WebhookOutbox`), over
 * migration 007's `webhook_deliveries` and migration 009's `webhook_subscription_health`. A claim
 * is one statement in an IMMEDIATE transaction, which SQLite serializes with every other writer:
 * it sees every lease taken before it, so a subscription never has two deliveries leased.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { Delivery, SubscriptionPause, WebhookOutbox } from '../insight-port.ts';
import { byDue, DELIVERY_COLUMNS, toDelivery } from '../insight-rows.ts';
import type { Row } from '../sql-rows.ts';
import { sqlNumber } from '../sql-values.ts';

type Query = (sql: string, ...params: (string | number | null)[]) => Row[];

/**
 * A claim: the head of each subscription (its oldest due delivery) that has none leased and is not
 * paused, ranked by age within its organization, then taken by rank (every organization's first,
 * then every one's second, …) up to the limit. One index probe per subscription, whatever the
 * backlog behind each.
 */
const CLAIM = `WITH heads AS (
    SELECT s.org_id, (
      SELECT d.id FROM webhook_deliveries d WHERE d.subscription_id = s.id AND d.next_attempt_ms <= ?2
      ORDER BY d.next_attempt_ms, d.id LIMIT 1) AS id
    FROM webhook_subscriptions s
    WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries l WHERE l.subscription_id = s.id AND l.leased_until_ms > ?2)
      AND NOT EXISTS (
        SELECT 1 FROM webhook_subscription_health h WHERE h.subscription_id = s.id AND h.paused_until_ms > ?2)),
  turns AS (
    SELECT d.id, d.next_attempt_ms, ROW_NUMBER() OVER (PARTITION BY h.org_id ORDER BY d.next_attempt_ms, d.id) AS turn
    FROM heads h JOIN webhook_deliveries d ON d.id = h.id)
  UPDATE webhook_deliveries SET leased_until_ms = ?1
  WHERE id IN (SELECT id FROM turns ORDER BY turn, next_attempt_ms, id LIMIT ?3)
  RETURNING ${DELIVERY_COLUMNS}`;

export class SqliteOutbox implements WebhookOutbox {
  /** `all` runs a statement (the store's cached statements and error mapping). */
  protected readonly db: DatabaseSync;
  protected readonly all: Query;

  constructor(db: DatabaseSync, all: Query) {
    this.db = db;
    this.all = all;
  }

  /** Runs `work` in one IMMEDIATE transaction. */
  protected transaction<T>(work: () => T): T {
    this.all('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.all('COMMIT');
      return result;
    } catch (err) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw err;
    }
  }

  async claimDeliveries(nowMs: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    if (limit <= 0) return [];
    return this.transaction(() =>
      this.all(CLAIM, nowMs + leaseMs, nowMs, limit)
        .map(toDelivery)
        .sort(byDue),
    );
  }

  async completeDelivery(id: string): Promise<void> {
    this.all('DELETE FROM webhook_deliveries WHERE id = ?', id);
  }

  async retryDelivery(id: string, nextAttemptMs: number): Promise<void> {
    this.all(
      'UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_ms = ?, leased_until_ms = 0 WHERE id = ?',
      nextAttemptMs,
      id,
    );
  }

  async postponeDelivery(id: string, nextAttemptMs: number): Promise<void> {
    this.all('UPDATE webhook_deliveries SET next_attempt_ms = ?, leased_until_ms = 0 WHERE id = ?', nextAttemptMs, id);
  }

  async countDeliveries(): Promise<number> {
    return sqlNumber(this.all('SELECT COUNT(*) AS n FROM webhook_deliveries')[0]?.n);
  }

  async recordAttempt(subscriptionId: string, succeeded: boolean): Promise<number> {
    if (succeeded) {
      this.all('DELETE FROM webhook_subscription_health WHERE subscription_id = ?', subscriptionId);
      return 0;
    }
    const [row] = this.all(
      `INSERT INTO webhook_subscription_health (subscription_id, consecutive_failures)
       SELECT id, 1 FROM webhook_subscriptions WHERE id = ?
       ON CONFLICT (subscription_id) DO UPDATE SET consecutive_failures = consecutive_failures + 1
       RETURNING consecutive_failures`,
      subscriptionId,
    );
    return sqlNumber(row?.consecutive_failures);
  }

  async pauseSubscription(subscriptionId: string, pause: SubscriptionPause): Promise<number> {
    return this.transaction(() => {
      this.all(
        `INSERT INTO webhook_subscription_health (subscription_id, paused_until_ms)
         SELECT id, ?2 FROM webhook_subscriptions WHERE id = ?1
         ON CONFLICT (subscription_id) DO UPDATE SET paused_until_ms = excluded.paused_until_ms`,
        subscriptionId,
        pause.untilMs,
      );
      return this.all(
        `DELETE FROM webhook_deliveries WHERE subscription_id = ? AND enqueued_ms < ? AND leased_until_ms <= ?
         RETURNING id`,
        subscriptionId,
        pause.giveUpEnqueuedBeforeMs,
        pause.nowMs,
      ).length;
    });
  }
}
