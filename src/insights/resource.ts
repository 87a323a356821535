/**
 * An insight as the API shows it, and as webhooks carry it: the stored record without its
 * organization, its window as operation 4's payloads write windows.
 */
import type { InsightKind, InsightRecord, InsightSubject } from '../store/insight-port.ts';

export interface InsightResource {
  id: string;
  kind: InsightKind;
  subject: InsightSubject;
  workspace_id: string;
  window: { start_time_unix_seconds: number; end_time_unix_seconds: number };
  payload: Record<string, unknown>;
  created_at: string;
}

export function insightResource(i: InsightRecord): InsightResource {
  return {
    id: i.id,
    kind: i.kind,
    subject: i.subject,
    workspace_id: i.workspace_id,
    window: { start_time_unix_seconds: i.window_start_s, end_time_unix_seconds: i.window_end_s },
    payload: i.payload,
    created_at: i.created_at,
  };
}

/**
 * The body of the webhook announcing an insight (Standard Webhooks' `type`, `timestamp`, `data`):
 * `timestamp` is when the insight was detected, so every attempt sends the same bytes.
 */
export function insightCreatedBody(i: InsightRecord): string {
  return JSON.stringify({ type: 'insight.created', timestamp: i.created_at, data: insightResource(i) });
}
