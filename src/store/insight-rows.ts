/**
 * What both registry engines share for the insight store (insight-port.ts): the columns, the row
 * mappers, the delivery id and the rule that matches an insight to a subscription.
 */
import { createHash } from 'node:crypto';
import type {
  Delivery,
  InsightKind,
  InsightPagesQuery,
  InsightQuery,
  InsightRecord,
  InsightSeries,
  InsightSubject,
  OutboxBound,
  WebhookSubscription,
} from './insight-port.ts';
import type { Row } from './sql-rows.ts';
import { sqlNumber, sqlText } from './sql-values.ts';

export const INSIGHT_COLUMNS =
  'id, org_id, workspace_id, kind, subject_type, subject_id, subject_server, window_start_s, window_end_s, payload_json, created_at';
/** What an insight is written with: its columns and its detail (InsightSeries `detail`). */
export const INSIGHT_WRITE_COLUMNS = `${INSIGHT_COLUMNS}, detail`;
export const SUBSCRIPTION_COLUMNS =
  'id, org_id, workspace_id, url, kinds_json, subjects_json, created_by, created_at, secret_salt';
export const DELIVERY_COLUMNS = 'id, org_id, subscription_id, insight_id, attempts, next_attempt_ms, enqueued_ms';

/** The subject as its three columns: type, id and server (a tool's, else null). */
function subjectColumns(s: InsightSubject): [string, string, string | null] {
  return [s.type, s.id, s.type === 'tool' ? s.server : null];
}

/** What tells an insight apart from the others of its kind and subject beside its window (InsightSeries `detail`). */
function insightDetail(i: InsightRecord): string | null {
  const name = i.payload.evaluation_name;
  return i.kind === 'evaluation_drop' && typeof name === 'string' ? name : null;
}

/** An insight's column values, in INSIGHT_WRITE_COLUMNS order. */
export function insightValues(i: InsightRecord): (string | number | null)[] {
  return [
    i.id,
    i.org_id,
    i.workspace_id,
    i.kind,
    ...subjectColumns(i.subject),
    i.window_start_s,
    i.window_end_s,
    JSON.stringify(i.payload),
    i.created_at,
    insightDetail(i),
  ];
}

function toSubject(type: string, id: string, server: unknown): InsightSubject {
  if (type === 'tool') return { type, id, server: server === null || server === undefined ? null : sqlText(server) };
  return { type: type as 'skill' | 'agent', id };
}

export function toInsight(r: Row): InsightRecord {
  return {
    id: sqlText(r.id),
    org_id: sqlText(r.org_id),
    workspace_id: sqlText(r.workspace_id),
    kind: sqlText(r.kind) as InsightKind,
    subject: toSubject(sqlText(r.subject_type), sqlText(r.subject_id), r.subject_server),
    window_start_s: sqlNumber(r.window_start_s),
    window_end_s: sqlNumber(r.window_end_s),
    payload: JSON.parse(sqlText(r.payload_json)) as Record<string, unknown>,
    created_at: sqlText(r.created_at),
  };
}

export function subscriptionValues(s: WebhookSubscription): string[] {
  return [
    s.id,
    s.org_id,
    s.workspace_id,
    s.url,
    JSON.stringify(s.kinds),
    JSON.stringify(s.subjects),
    s.created_by,
    s.created_at,
    s.secret_salt,
  ];
}

export function toSubscription(r: Row): WebhookSubscription {
  return {
    id: sqlText(r.id),
    org_id: sqlText(r.org_id),
    workspace_id: sqlText(r.workspace_id),
    url: sqlText(r.url),
    kinds: JSON.parse(sqlText(r.kinds_json)) as InsightKind[],
    subjects: JSON.parse(sqlText(r.subjects_json)) as InsightSubject[],
    created_by: sqlText(r.created_by),
    created_at: sqlText(r.created_at),
    secret_salt: sqlText(r.secret_salt),
  };
}

export function toDelivery(r: Row): Delivery {
  return {
    id: sqlText(r.id),
    org_id: sqlText(r.org_id),
    subscription_id: sqlText(r.subscription_id),
    insight_id: sqlText(r.insight_id),
    attempts: sqlNumber(r.attempts),
    next_attempt_ms: sqlNumber(r.next_attempt_ms),
    enqueued_ms: sqlNumber(r.enqueued_ms),
  };
}

/** Oldest due first, then by id (the order claimDeliveries answers in). */
export function byDue(a: Delivery, b: Delivery): number {
  return a.next_attempt_ms - b.next_attempt_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * What organizations owe the outbox while insights are recorded, against an {@link OutboxBound}:
 * each organization's debt is read once (inside the engine's serialized step), then counted as
 * deliveries are enqueued; what was turned away is told to the bound once committed.
 */
export class OwedLedger {
  private readonly bound: OutboxBound | undefined;
  private readonly owed = new Map<string, number>();
  private readonly refused = new Map<string, number>();

  constructor(bound: OutboxBound | undefined) {
    this.bound = bound;
  }

  /** The organizations whose debt must be read first (none without a bound), in a fixed order. */
  organizations(insights: readonly InsightRecord[]): string[] {
    return this.bound === undefined ? [] : [...new Set(insights.map((i) => i.org_id))].sort();
  }

  owes(orgId: string, deliveries: number): void {
    this.owed.set(orgId, deliveries);
  }

  /** Whether another delivery of `orgId` may be enqueued; a refusal is counted. */
  admits(orgId: string): boolean {
    if (this.bound === undefined || (this.owed.get(orgId) ?? 0) < this.bound.maxOwedPerOrg) return true;
    this.refused.set(orgId, (this.refused.get(orgId) ?? 0) + 1);
    return false;
  }

  enqueued(orgId: string): void {
    this.owed.set(orgId, (this.owed.get(orgId) ?? 0) + 1);
  }

  /** After the commit: the refusals, per organization. */
  report(): void {
    for (const [orgId, n] of this.refused) this.bound?.refused(orgId, n);
  }
}

const sameSubject = (a: InsightSubject, b: InsightSubject) =>
  JSON.stringify(subjectColumns(a)) === JSON.stringify(subjectColumns(b));

/** Whether the subscription wants the insight: same organization and workspace, kind and subject listed (or none listed). */
export function subscriptionMatches(s: WebhookSubscription, i: InsightRecord): boolean {
  return (
    s.org_id === i.org_id &&
    s.workspace_id === i.workspace_id &&
    (s.kinds.length === 0 || s.kinds.includes(i.kind)) &&
    (s.subjects.length === 0 || s.subjects.some((subject) => sameSubject(subject, i.subject)))
  );
}

/**
 * The delivery of an insight to a subscription: its id (the `webhook-id` of every attempt) is
 * derived from both, so enqueuing it twice is one row.
 */
export function deliveryId(subscriptionId: string, insightId: string): string {
  const digest = createHash('sha256').update(subscriptionId).update('\n').update(insightId).digest('base64url');
  return `msg_${digest.slice(0, 32)}`;
}

/** How an engine writes the parts of an insight list that differ: placeholders, lists, a nullable equality. */
export interface ListDialect {
  /** The i-th placeholder (1-based; it may be used more than once). */
  p(i: number): string;
  /** `column` is one of the list bound at `placeholder`. */
  inList(column: string, placeholder: string): string;
  /** A list as its engine binds it (SQLite: JSON text, PostgreSQL: an array). */
  list(values: readonly string[]): string | string[];
  /** `subject_server` equals the value bound at `placeholder`, null equal to null. */
  sameServer(placeholder: string): string;
}

/**
 * The conditions of a list of insights after `org_id` and the workspaces (the first two
 * parameters), with their parameters.
 */
export function insightListConditions(
  query: InsightQuery,
  d: ListDialect,
): { where: string; params: (string | string[] | number | null)[] } {
  const where: string[] = [];
  const params: (string | string[] | number | null)[] = [];
  const next = (v: string | string[] | number | null) => {
    params.push(v);
    return d.p(params.length + 2);
  };
  if (query.subject !== undefined) {
    const [type, id, server] = subjectColumns(query.subject);
    where.push(`subject_type = ${next(type)} AND subject_id = ${next(id)}`);
    if (type === 'tool') where.push(d.sameServer(next(server)));
  }
  if (query.kinds !== undefined) where.push(d.inList('kind', next(d.list(query.kinds))));
  if (query.sinceS !== undefined) where.push(`window_end_s > ${next(query.sinceS)}`);
  if (query.after !== undefined) {
    const w = next(query.after.window_end_s);
    where.push(`(window_end_s < ${w} OR (window_end_s = ${w} AND id > ${next(query.after.id)}))`);
  }
  return { where: where.map((c) => ` AND ${c}`).join(''), params };
}

/**
 * The newest window end of a series after `sinceS` (InsightStore `lastWindowEnd`): the statement
 * and its parameters, walking the index `insights_series` (a null detail compared with IS NULL, so
 * that the index serves it too).
 */
export function lastWindowEndSql(
  series: InsightSeries,
  sinceS: number,
  d: ListDialect,
): { sql: string; params: (string | number | null)[] } {
  const [type, id, server] = subjectColumns(series.subject);
  const params: (string | number | null)[] = [series.orgId, series.workspaceId, series.kind, type, id, sinceS];
  const next = (v: string | null) => {
    params.push(v);
    return d.p(params.length);
  };
  const where = [
    'org_id = ' + d.p(1),
    'workspace_id = ' + d.p(2),
    'kind = ' + d.p(3),
    'subject_type = ' + d.p(4),
    'subject_id = ' + d.p(5),
    'window_end_s > ' + d.p(6),
    series.detail === null ? 'detail IS NULL' : `detail = ${next(series.detail)}`,
  ];
  if (type === 'tool') where.push(d.sameServer(next(server)));
  return {
    sql: `SELECT window_end_s FROM insights WHERE ${where.join(' AND ')} ORDER BY window_end_s DESC LIMIT 1`,
    params,
  };
}

/**
 * What a statement of {@link pageGroups} binds besides the organization: its pages as JSON objects
 * `{n, s, t, d, v, e, i}` (index in the batch, scope index, subject type, id and server, and the
 * position the page starts after: before every window when none), the scopes as a JSON array of
 * lists, the kinds (null: every kind) and the bound `since` (the smallest integer when none).
 */
export interface PageGroup {
  bySubject: boolean;
  pages: string;
  scopes: string;
  kinds: readonly string[] | null;
  sinceS: number;
}

/**
 * The statements a batch of pages takes: one for the pages about a subject, one for the feeds
 * (each its own index), whichever the batch holds; none when it holds no page or asks for none.
 */
export function pageGroups(query: InsightPagesQuery): PageGroup[] {
  if (query.limit <= 0) return [];
  const scopes = JSON.stringify(query.scopes);
  const shared = {
    scopes,
    kinds: query.kinds ?? null,
    sinceS: query.sinceS ?? Number.MIN_SAFE_INTEGER,
  };
  const groups: PageGroup[] = [];
  for (const bySubject of [true, false]) {
    const pages = query.pages.flatMap((p, n) => {
      if ((p.subject !== undefined) !== bySubject) return [];
      const [t, d, v] = p.subject === undefined ? [null, null, null] : subjectColumns(p.subject);
      const e = p.after?.window_end_s ?? Number.MAX_SAFE_INTEGER;
      return [{ n, s: p.scope, t, d, v, e, i: p.after?.id ?? '' }];
    });
    if (pages.length > 0) groups.push({ bySubject, pages: JSON.stringify(pages), ...shared });
  }
  return groups;
}

/** The rows of a batch's statements (each with its page's index as `page_n`) as one list per page. */
export function toPages(count: number, rows: readonly Row[]): InsightRecord[][] {
  const pages = Array.from({ length: count }, (): InsightRecord[] => []);
  for (const r of rows) pages[sqlNumber(r.page_n)]?.push(toInsight(r));
  return pages;
}
