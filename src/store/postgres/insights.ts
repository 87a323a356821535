/**
 * The insight part of the PostgreSQL registry engine (insight-port.ts), over the tables of
 * registry migration 006. An insight and its deliveries commit in one transaction, an
 * organization's debt counted under an advisory lock on it, so writers at once never pass its cap;
 * the outbox's claims and settlements: outbox.ts. Subscription and settings writes bump the
 * registry generation, as an import does, so every replica's response cache sees them; insights do
 * not (no answer kept by generation reads them: SQLite's migration 012). A subscription's creation counts and inserts under an advisory lock on its
 * workspace, so creations at once never pass the cap.
 */
import type {
  InsightPagesQuery,
  InsightQuery,
  InsightRecord,
  InsightSeries,
  InsightStore,
  OutboxBound,
  SubscriptionsFull,
  WebhookSubscription,
} from '../insight-port.ts';
import {
  DELIVERY_COLUMNS,
  deliveryId,
  INSIGHT_COLUMNS,
  INSIGHT_WRITE_COLUMNS,
  insightListConditions,
  lastWindowEndSql,
  insightValues,
  OwedLedger,
  pageGroups,
  subscriptionMatches,
  SUBSCRIPTION_COLUMNS,
  subscriptionValues,
  toInsight,
  toPages,
  toSubscription,
  type ListDialect,
  type PageGroup,
} from '../insight-rows.ts';
import type { Row } from '../sql-rows.ts';
import { sqlNumber } from '../sql-values.ts';
import { PostgresOutbox } from './outbox.ts';

const DIALECT: ListDialect = {
  p: (i) => `$${String(i)}`,
  inList: (column, placeholder) => `${column} = ANY(${placeholder}::text[])`,
  list: (values) => [...values],
  sameServer: (placeholder) => `subject_server IS NOT DISTINCT FROM ${placeholder}::text`,
};

const BUMP_GENERATION = 'UPDATE registry_generation SET n = n + 1 WHERE id = 1';
/**
 * The first key of the two-key advisory lock a subscription's creation takes on its workspace (the
 * second: a hash of organization and workspace; two workspaces sharing one only take turns).
 */
const SUBSCRIBE_LOCK = 7311;
/** The first key of the two-key advisory lock recording takes on each organization it enqueues for (the second: its hash). */
const OWED_LOCK = 7313;
/**
 * The pages of a batch (insight-rows.ts `pageGroups`): for each page (`p`, one object of $2), its
 * newest `limit` insights after its position, read by a LATERAL subquery that walks the subject
 * index (or the feed index) from that position and stops at the limit.
 */
function pagesSql(bySubject: boolean): string {
  return `SELECT p.n AS page_n, found.* FROM jsonb_to_recordset($2::jsonb) AS p(n int, s int, t text, d text, v text, e bigint, i text)
    CROSS JOIN LATERAL (
      SELECT ${INSIGHT_COLUMNS} FROM insights
      WHERE org_id = $1 AND workspace_id = ANY(ARRAY(SELECT jsonb_array_elements_text($3::jsonb -> p.s)))${
        bySubject
          ? `
        AND subject_type = p.t AND subject_id = p.d AND subject_server IS NOT DISTINCT FROM p.v`
          : ''
      }
        AND window_end_s <= p.e AND (window_end_s < p.e OR id > p.i)
        AND ($4::text[] IS NULL OR kind = ANY($4::text[])) AND window_end_s > $5
      ORDER BY window_end_s DESC, id LIMIT $6) found
    ORDER BY p.n, found.window_end_s DESC, found.id`;
}

const placeholders = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${String(from + i)}`).join(', ');

export class PostgresInsights extends PostgresOutbox implements InsightStore {
  async recordInsights(insights: readonly InsightRecord[], nowMs: number, bound?: OutboxBound): Promise<string[]> {
    if (insights.length === 0) return [];
    const ledger = new OwedLedger(bound);
    const recorded = await this.transaction(async (c) => {
      // Recordings for one organization take turns (any replica): each counts what the ones before committed.
      for (const orgId of ledger.organizations(insights)) {
        await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [OWED_LOCK, orgId]);
        const { rows } = await c.query<Row>('SELECT COUNT(*)::int AS n FROM webhook_deliveries WHERE org_id = $1', [
          orgId,
        ]);
        ledger.owes(orgId, sqlNumber(rows[0]?.n));
      }
      const stored: string[] = [];
      const subscriptions = new Map<string, WebhookSubscription[]>();
      for (const insight of insights) {
        const inserted = await c.query(
          `INSERT INTO insights (${INSIGHT_WRITE_COLUMNS}) VALUES (${placeholders(12)}) ON CONFLICT (id) DO NOTHING RETURNING id`,
          insightValues(insight),
        );
        if (inserted.rowCount === 0) continue;
        stored.push(insight.id);
        const key = JSON.stringify([insight.org_id, insight.workspace_id]);
        let candidates = subscriptions.get(key);
        if (candidates === undefined) {
          // FOR SHARE: a subscription deleted meanwhile waits for this commit, then drops what it enqueued.
          const { rows } = await c.query<Row>(
            `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE org_id = $1 AND workspace_id = $2
             ORDER BY created_at, id FOR SHARE`,
            [insight.org_id, insight.workspace_id],
          );
          candidates = rows.map(toSubscription);
          subscriptions.set(key, candidates);
        }
        for (const s of candidates.filter((candidate) => subscriptionMatches(candidate, insight))) {
          if (!ledger.admits(insight.org_id)) continue;
          const enqueued = await c.query(
            `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES ($1, $2, $3, $4, 0, $5, $5) ON CONFLICT (id) DO NOTHING`,
            [deliveryId(s.id, insight.id), insight.org_id, s.id, insight.id, nowMs],
          );
          if (enqueued.rowCount === 1) ledger.enqueued(insight.org_id);
        }
      }
      return stored;
    });
    ledger.report();
    return recorded;
  }

  async listInsights(query: InsightQuery): Promise<InsightRecord[]> {
    if (query.workspaceIds.length === 0 || query.limit <= 0) return [];
    const { where, params } = insightListConditions(query, DIALECT);
    const rows = await this.all(
      `SELECT ${INSIGHT_COLUMNS} FROM insights WHERE org_id = $1 AND workspace_id = ANY($2::text[])${where}
       ORDER BY window_end_s DESC, id LIMIT $${String(params.length + 3)}`,
      [query.orgId, query.workspaceIds, ...params, query.limit],
    );
    return rows.map(toInsight);
  }

  async listInsightPages(query: InsightPagesQuery): Promise<InsightRecord[][]> {
    const read = (g: PageGroup) =>
      this.all(pagesSql(g.bySubject), [query.orgId, g.pages, g.scopes, g.kinds, g.sinceS, query.limit]);
    return toPages(query.pages.length, (await Promise.all(pageGroups(query).map(read))).flat());
  }

  async lastWindowEnd(series: InsightSeries, sinceS: number): Promise<number | null> {
    const { sql, params } = lastWindowEndSql(series, sinceS, DIALECT);
    const [row] = await this.all(sql, params);
    return row === undefined ? null : sqlNumber(row.window_end_s);
  }

  async pruneInsights(cutoffS: number, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    return this.transaction(async (c) => {
      // SKIP LOCKED: replicas pruning at once take disjoint batches rather than wait on each other.
      const { rows } = await c.query<Row>(
        `SELECT id FROM insights WHERE window_end_s < $1 ORDER BY window_end_s, id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [cutoffS, limit],
      );
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.id as string);
      await c.query('DELETE FROM webhook_deliveries WHERE insight_id = ANY($1::text[])', [ids]);
      return (await c.query('DELETE FROM insights WHERE id = ANY($1::text[])', [ids])).rowCount ?? 0;
    });
  }

  async getInsights(orgId: string, ids: readonly string[]): Promise<InsightRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.all(
      `SELECT ${INSIGHT_COLUMNS} FROM insights WHERE org_id = $1 AND id = ANY($2::text[]) ORDER BY id`,
      [orgId, ids],
    );
    return rows.map(toInsight);
  }

  async createSubscription(s: WebhookSubscription, max = Infinity): Promise<SubscriptionsFull | null> {
    return this.transaction(async (c) => {
      // Creations in one workspace take turns (any replica): each counts what the ones before committed.
      await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
        SUBSCRIBE_LOCK,
        JSON.stringify([s.org_id, s.workspace_id]),
      ]);
      const { rows } = await c.query<Row>(
        'SELECT COUNT(*)::int AS n FROM webhook_subscriptions WHERE org_id = $1 AND workspace_id = $2',
        [s.org_id, s.workspace_id],
      );
      const held = sqlNumber(rows[0]?.n);
      if (held >= max) return { held };
      await c.query(
        `INSERT INTO webhook_subscriptions (${SUBSCRIPTION_COLUMNS}) VALUES (${placeholders(9)})`,
        subscriptionValues(s),
      );
      await c.query(BUMP_GENERATION);
      return null;
    });
  }

  async listSubscriptions(orgId: string, workspaceIds: readonly string[]): Promise<WebhookSubscription[]> {
    if (workspaceIds.length === 0) return [];
    const rows = await this.all(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE org_id = $1 AND workspace_id = ANY($2::text[])
       ORDER BY created_at, id`,
      [orgId, workspaceIds],
    );
    return rows.map(toSubscription);
  }

  async getSubscriptions(orgId: string, ids: readonly string[]): Promise<WebhookSubscription[]> {
    if (ids.length === 0) return [];
    const rows = await this.all(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE org_id = $1 AND id = ANY($2::text[])
       ORDER BY created_at, id`,
      [orgId, ids],
    );
    return rows.map(toSubscription);
  }

  async deleteSubscription(orgId: string, id: string): Promise<boolean> {
    return this.transaction(async (c) => {
      const gone = await c.query('DELETE FROM webhook_subscriptions WHERE org_id = $1 AND id = $2', [orgId, id]);
      if (gone.rowCount === 0) return false;
      // The foreign key's cascade drops its deliveries too; said here so that no engine relies on it alone.
      await c.query('DELETE FROM webhook_deliveries WHERE subscription_id = $1', [id]);
      await c.query('DELETE FROM webhook_subscription_health WHERE subscription_id = $1', [id]);
      await c.query(BUMP_GENERATION);
      return true;
    });
  }

  async detectionSettings(orgId: string): Promise<Record<string, Record<string, number>>> {
    const rows = await this.all(
      'SELECT workspace_id, settings_json FROM detection_settings WHERE org_id = $1 ORDER BY workspace_id COLLATE "C"',
      [orgId],
    );
    return Object.fromEntries(
      rows.map((r) => [r.workspace_id as string, JSON.parse(r.settings_json as string) as Record<string, number>]),
    );
  }

  async setDetectionSettings(orgId: string, workspaceId: string, settings: Record<string, number>): Promise<void> {
    await this.transaction(async (c) => {
      if (Object.keys(settings).length === 0)
        await c.query('DELETE FROM detection_settings WHERE org_id = $1 AND workspace_id = $2', [orgId, workspaceId]);
      else
        await c.query(
          `INSERT INTO detection_settings (org_id, workspace_id, settings_json) VALUES ($1, $2, $3)
           ON CONFLICT (org_id, workspace_id) DO UPDATE SET settings_json = EXCLUDED.settings_json`,
          [orgId, workspaceId, JSON.stringify(settings)],
        );
      await c.query(BUMP_GENERATION);
    });
  }

  async detectionCursor(orgId: string): Promise<number | null> {
    const [row] = await this.all('SELECT cursor_s FROM detection_cursors WHERE org_id = $1', [orgId]);
    return row === undefined ? null : sqlNumber(row.cursor_s);
  }

  async setDetectionCursor(orgId: string, cursorS: number): Promise<void> {
    await this.all(
      `INSERT INTO detection_cursors (org_id, cursor_s) VALUES ($1, $2)
       ON CONFLICT (org_id) DO UPDATE SET cursor_s = EXCLUDED.cursor_s`,
      [orgId, cursorS],
    );
  }

  async tryLease(name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean> {
    const rows = await this.all(
      `INSERT INTO leases (name, holder, expires_ms) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_ms = EXCLUDED.expires_ms
       WHERE leases.holder = EXCLUDED.holder OR leases.expires_ms <= $4
       RETURNING holder`,
      [name, holder, nowMs + ttlMs, nowMs],
    );
    return rows.length > 0;
  }
}
