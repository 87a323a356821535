/**
 * The insight part of the SQLite registry engine (insight-port.ts), over the tables of migration
 * 007. Writes run in IMMEDIATE transactions, which SQLite serializes: an insight and its
 * deliveries commit together (an organization's debt counted and grown in the same step), and a
 * subscription is counted and inserted in one. The outbox's claims and settlements: outbox.ts. The
 * registry generation moves by migration 008's triggers: with subscriptions and settings, not with
 * insights (migration 012: no answer kept by generation reads them), the outbox, cursors and leases.
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
import { sqlNumber } from '../sql-values.ts';
import { SqliteOutbox } from './outbox.ts';

const IN = 'IN (SELECT value FROM json_each(?))';

const DIALECT: ListDialect = {
  p: (i) => `?${String(i)}`,
  inList: (column, placeholder) => `${column} IN (SELECT value FROM json_each(${placeholder}))`,
  list: (values) => JSON.stringify(values),
  sameServer: (placeholder) => `subject_server IS ${placeholder}`,
};

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * The pages of a batch (insight-rows.ts `pageGroups`): for each page (`p`, one element of ?2), its
 * newest `limit` insights after its position, read by a correlated subquery that walks the subject
 * index (or the feed index) from that position and stops at the limit.
 */
function pagesSql(bySubject: boolean): string {
  const v = (field: string) => `(p.value->>'${field}')`;
  return `SELECT ${v('n')} AS page_n, ${INSIGHT_COLUMNS.split(', ')
    .map((c) => `i.${c}`)
    .join(', ')}
    FROM json_each(?2) p JOIN insights i ON i.rowid IN (
      SELECT rowid FROM insights WHERE org_id = ?1
        AND workspace_id IN (SELECT value FROM json_each(?3, '$[' || ${v('s')} || ']'))${
          bySubject
            ? `
        AND subject_type = ${v('t')} AND subject_id = ${v('d')} AND subject_server IS ${v('v')}`
            : ''
        }
        AND window_end_s <= ${v('e')} AND (window_end_s < ${v('e')} OR id > ${v('i')})
        AND (?4 IS NULL OR kind IN (SELECT value FROM json_each(?4))) AND window_end_s > ?5
      ORDER BY window_end_s DESC, id LIMIT ?6)
    ORDER BY 1, i.window_end_s DESC, i.id`;
}

export class SqliteInsights extends SqliteOutbox implements InsightStore {
  async recordInsights(insights: readonly InsightRecord[], nowMs: number, bound?: OutboxBound): Promise<string[]> {
    if (insights.length === 0) return [];
    const ledger = new OwedLedger(bound);
    const recorded = this.transaction(() => {
      for (const orgId of ledger.organizations(insights))
        ledger.owes(
          orgId,
          sqlNumber(this.all('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE org_id = ?', orgId)[0]?.n),
        );
      const stored: string[] = [];
      const subscriptions = new Map<string, WebhookSubscription[]>();
      for (const insight of insights) {
        const inserted = this.all(
          `INSERT INTO insights (${INSIGHT_WRITE_COLUMNS}) VALUES (${placeholders(12)}) ON CONFLICT (id) DO NOTHING RETURNING id`,
          ...insightValues(insight),
        );
        if (inserted.length === 0) continue;
        stored.push(insight.id);
        const key = JSON.stringify([insight.org_id, insight.workspace_id]);
        let candidates = subscriptions.get(key);
        if (candidates === undefined) {
          candidates = this.all(
            `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE org_id = ? AND workspace_id = ?
             ORDER BY created_at, id`,
            insight.org_id,
            insight.workspace_id,
          ).map(toSubscription);
          subscriptions.set(key, candidates);
        }
        for (const s of candidates.filter((c) => subscriptionMatches(c, insight))) {
          if (!ledger.admits(insight.org_id)) continue;
          const enqueued = this.all(
            `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, 0, ?, ?) ON CONFLICT (id) DO NOTHING
             RETURNING id`,
            deliveryId(s.id, insight.id),
            insight.org_id,
            s.id,
            insight.id,
            nowMs,
            nowMs,
          );
          if (enqueued.length > 0) ledger.enqueued(insight.org_id);
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
    return this.all(
      `SELECT ${INSIGHT_COLUMNS} FROM insights WHERE org_id = ?1 AND workspace_id IN (SELECT value FROM json_each(?2))${where}
       ORDER BY window_end_s DESC, id LIMIT ?${String(params.length + 3)}`,
      query.orgId,
      JSON.stringify(query.workspaceIds),
      ...(params as (string | number | null)[]),
      query.limit,
    ).map(toInsight);
  }

  async listInsightPages(query: InsightPagesQuery): Promise<InsightRecord[][]> {
    const read = (g: PageGroup) =>
      this.all(
        pagesSql(g.bySubject),
        query.orgId,
        g.pages,
        g.scopes,
        g.kinds === null ? null : JSON.stringify(g.kinds),
        g.sinceS,
        query.limit,
      );
    return toPages(query.pages.length, pageGroups(query).flatMap(read));
  }

  async lastWindowEnd(series: InsightSeries, sinceS: number): Promise<number | null> {
    const { sql, params } = lastWindowEndSql(series, sinceS, DIALECT);
    const [row] = this.all(sql, ...params);
    return row === undefined ? null : sqlNumber(row.window_end_s);
  }

  async pruneInsights(cutoffS: number, limit: number): Promise<number> {
    if (limit <= 0) return 0;
    return this.transaction(() => {
      const ids = JSON.stringify(
        this.all(
          'SELECT id FROM insights WHERE window_end_s < ? ORDER BY window_end_s, id LIMIT ?',
          cutoffS,
          limit,
        ).map((r) => r.id),
      );
      this.all(`DELETE FROM webhook_deliveries WHERE insight_id ${IN}`, ids);
      return this.all(`DELETE FROM insights WHERE id ${IN} RETURNING id`, ids).length;
    });
  }

  async getInsights(orgId: string, ids: readonly string[]): Promise<InsightRecord[]> {
    if (ids.length === 0) return [];
    return this.all(
      `SELECT ${INSIGHT_COLUMNS} FROM insights WHERE org_id = ? AND id ${IN} ORDER BY id`,
      orgId,
      JSON.stringify(ids),
    ).map(toInsight);
  }

  async createSubscription(s: WebhookSubscription, max = Infinity): Promise<SubscriptionsFull | null> {
    return this.transaction(() => {
      const [row] = this.all(
        'SELECT COUNT(*) AS n FROM webhook_subscriptions WHERE org_id = ? AND workspace_id = ?',
        s.org_id,
        s.workspace_id,
      );
      const held = sqlNumber(row?.n);
      if (held >= max) return { held };
      this.all(
        `INSERT INTO webhook_subscriptions (${SUBSCRIPTION_COLUMNS}) VALUES (${placeholders(9)})`,
        ...subscriptionValues(s),
      );
      return null;
    });
  }

  async listSubscriptions(orgId: string, workspaceIds: readonly string[]): Promise<WebhookSubscription[]> {
    if (workspaceIds.length === 0) return [];
    return this.all(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE org_id = ? AND workspace_id ${IN} ORDER BY created_at, id`,
      orgId,
      JSON.stringify(workspaceIds),
    ).map(toSubscription);
  }

  async getSubscriptions(orgId: string, ids: readonly string[]): Promise<WebhookSubscription[]> {
    if (ids.length === 0) return [];
    return this.all(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE org_id = ? AND id ${IN} ORDER BY created_at, id`,
      orgId,
      JSON.stringify(ids),
    ).map(toSubscription);
  }

  async deleteSubscription(orgId: string, id: string): Promise<boolean> {
    return this.transaction(() => {
      this.all('DELETE FROM webhook_deliveries WHERE org_id = ? AND subscription_id = ?', orgId, id);
      this.all(
        'DELETE FROM webhook_subscription_health WHERE subscription_id IN (SELECT id FROM webhook_subscriptions WHERE org_id = ? AND id = ?)',
        orgId,
        id,
      );
      return (
        this.all('DELETE FROM webhook_subscriptions WHERE org_id = ? AND id = ? RETURNING id', orgId, id).length > 0
      );
    });
  }

  async detectionSettings(orgId: string): Promise<Record<string, Record<string, number>>> {
    const rows = this.all(
      'SELECT workspace_id, settings_json FROM detection_settings WHERE org_id = ? ORDER BY workspace_id',
      orgId,
    );
    return Object.fromEntries(
      rows.map((r) => [r.workspace_id as string, JSON.parse(r.settings_json as string) as Record<string, number>]),
    );
  }

  async setDetectionSettings(orgId: string, workspaceId: string, settings: Record<string, number>): Promise<void> {
    this.transaction(() => {
      if (Object.keys(settings).length === 0)
        this.all('DELETE FROM detection_settings WHERE org_id = ? AND workspace_id = ?', orgId, workspaceId);
      else
        this.all(
          `INSERT INTO detection_settings (org_id, workspace_id, settings_json) VALUES (?, ?, ?)
           ON CONFLICT (org_id, workspace_id) DO UPDATE SET settings_json = excluded.settings_json`,
          orgId,
          workspaceId,
          JSON.stringify(settings),
        );
    });
  }

  async detectionCursor(orgId: string): Promise<number | null> {
    const [row] = this.all('SELECT cursor_s FROM detection_cursors WHERE org_id = ?', orgId);
    return row === undefined ? null : sqlNumber(row.cursor_s);
  }

  async setDetectionCursor(orgId: string, cursorS: number): Promise<void> {
    this.all(
      `INSERT INTO detection_cursors (org_id, cursor_s) VALUES (?, ?)
       ON CONFLICT (org_id) DO UPDATE SET cursor_s = excluded.cursor_s`,
      orgId,
      cursorS,
    );
  }

  async tryLease(name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean> {
    const rows = this.all(
      `INSERT INTO leases (name, holder, expires_ms) VALUES (?1, ?2, ?3)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
       WHERE leases.holder = excluded.holder OR leases.expires_ms <= ?4
       RETURNING holder`,
      name,
      holder,
      nowMs + ttlMs,
      nowMs,
    );
    return rows.length > 0;
  }
}
