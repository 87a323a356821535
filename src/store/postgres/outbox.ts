/**
 * The webhook outbox of the PostgreSQL registry engine (insight-port.ts `WebhookOutbox`), over
 * registry migration 006's `webhook_deliveries` and 007's `webhook_subscription_health`. Claims
 * take turns (any replica) under a transaction advisory lock on the schema: each one's statement
 * starts after the one before committed, so it sees every lease taken and a subscription never has
 * two deliveries leased. Outbox writes move no registry generation (bookkeeping).
 */
import type pg from 'pg';
import type { Delivery, SubscriptionPause, WebhookOutbox } from '../insight-port.ts';
import { byDue, DELIVERY_COLUMNS, toDelivery } from '../insight-rows.ts';
import type { Row } from '../sql-rows.ts';
import { sqlNumber } from '../sql-values.ts';

type Query = (sql: string, params?: unknown[]) => Promise<Row[]>;
type Transaction = <T>(work: (c: pg.PoolClient) => Promise<T>) => Promise<T>;

/** The first key of the two-key advisory lock claims take (the second: a hash of the schema's name). */
const CLAIM_LOCK = 7312;

/**
 * A claim: the head of each subscription (its oldest due delivery, read by a LATERAL walk of its
 * due index) that has none leased and is not paused, ranked by age within its organization, then
 * taken by rank (every organization's first, then every one's second, …) up to the limit.
 */
const CLAIM = `WITH heads AS (
    SELECT s.org_id, h.id, h.next_attempt_ms FROM webhook_subscriptions s
    CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_ms FROM webhook_deliveries d
      WHERE d.subscription_id = s.id AND d.next_attempt_ms <= $2
      ORDER BY d.next_attempt_ms, d.id LIMIT 1) h
    WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries l WHERE l.subscription_id = s.id AND l.leased_until_ms > $2)
      AND NOT EXISTS (
        SELECT 1 FROM webhook_subscription_health p WHERE p.subscription_id = s.id AND p.paused_until_ms > $2)),
  turns AS (
    SELECT id, next_attempt_ms, row_number() OVER (PARTITION BY org_id ORDER BY next_attempt_ms, id) AS turn
    FROM heads)
  UPDATE webhook_deliveries d SET leased_until_ms = $1
  FROM (SELECT id FROM turns ORDER BY turn, next_attempt_ms, id LIMIT $3) pick
  WHERE d.id = pick.id AND d.leased_until_ms <= $2
  RETURNING ${DELIVERY_COLUMNS.split(', ')
    .map((c) => `d.${c}`)
    .join(', ')}`;

export class PostgresOutbox implements WebhookOutbox {
  /** `all` runs a statement on the pool (with the store's error mapping); `transaction` runs work in one. */
  protected readonly all: Query;
  protected readonly transaction: Transaction;

  constructor(all: Query, transaction: Transaction) {
    this.all = all;
    this.transaction = transaction;
  }

  async claimDeliveries(nowMs: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    if (limit <= 0) return [];
    return this.transaction(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [CLAIM_LOCK]);
      const { rows } = await c.query<Row>(CLAIM, [nowMs + leaseMs, nowMs, limit]);
      return rows.map(toDelivery).sort(byDue);
    });
  }

  async completeDelivery(id: string): Promise<void> {
    await this.all('DELETE FROM webhook_deliveries WHERE id = $1', [id]);
  }

  async retryDelivery(id: string, nextAttemptMs: number): Promise<void> {
    await this.all(
      'UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_ms = $1, leased_until_ms = 0 WHERE id = $2',
      [nextAttemptMs, id],
    );
  }

  async postponeDelivery(id: string, nextAttemptMs: number): Promise<void> {
    await this.all('UPDATE webhook_deliveries SET next_attempt_ms = $1, leased_until_ms = 0 WHERE id = $2', [
      nextAttemptMs,
      id,
    ]);
  }

  async countDeliveries(): Promise<number> {
    const [row] = await this.all('SELECT COUNT(*)::bigint AS n FROM webhook_deliveries');
    return sqlNumber(row?.n);
  }

  async recordAttempt(subscriptionId: string, succeeded: boolean): Promise<number> {
    if (succeeded) {
      await this.all('DELETE FROM webhook_subscription_health WHERE subscription_id = $1', [subscriptionId]);
      return 0;
    }
    const [row] = await this.all(
      `INSERT INTO webhook_subscription_health (subscription_id, consecutive_failures)
       SELECT id, 1 FROM webhook_subscriptions WHERE id = $1
       ON CONFLICT (subscription_id)
       DO UPDATE SET consecutive_failures = webhook_subscription_health.consecutive_failures + 1
       RETURNING consecutive_failures`,
      [subscriptionId],
    );
    return sqlNumber(row?.consecutive_failures);
  }

  async pauseSubscription(subscriptionId: string, pause: SubscriptionPause): Promise<number> {
    return this.transaction(async (c) => {
      await c.query(
        `INSERT INTO webhook_subscription_health (subscription_id, paused_until_ms)
         SELECT id, $2 FROM webhook_subscriptions WHERE id = $1
         ON CONFLICT (subscription_id) DO UPDATE SET paused_until_ms = EXCLUDED.paused_until_ms`,
        [subscriptionId, pause.untilMs],
      );
      const gone = await c.query(
        `DELETE FROM webhook_deliveries WHERE subscription_id = $1 AND enqueued_ms < $2 AND leased_until_ms <= $3`,
        [subscriptionId, pause.giveUpEnqueuedBeforeMs, pause.nowMs],
      );
      return gone.rowCount ?? 0;
    });
  }
}
