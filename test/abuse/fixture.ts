/**
 * The attacker's seat for the abuse tests: the small bundle plus `u-editor`, an editor of ws-a-sub
 * only (it cannot read ws-a-team, home of skill sk-1), and skill sk-2 in ws-a-sub, which it can.
 */
import { attr, attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { smallBundle } from '../fixtures/small-bundle.ts';

export function abuseBundle() {
  const bundle = smallBundle();
  const t0 = '2026-01-01T00:00:00Z';
  bundle.users.push({ id: 'u-editor', org_id: 'org-a', name: 'Eve Editor', created_at: t0, updated_at: t0 });
  bundle.memberships.push({ workspace_id: 'ws-a-sub', user_id: 'u-editor', role: 'editor' });
  const sk1 = bundle.artifacts.find((a) => a.id === 'sk-1') as Record<string, unknown>;
  bundle.artifacts.push({
    ...sk1,
    id: 'sk-2',
    name: 'translate',
    display_name: 'translate',
    workspace_id: 'ws-a-sub',
  } as never);
  return bundle;
}

/** An OTLP/JSON request body of these spans under one resource. */
export function otlpBody(spans: object[], resource: Record<string, string> = {}): string {
  return JSON.stringify(otlpTraceBody({ resource: attrs(resource), spans }));
}

let next = 1;
/** A well-formed span (fresh ids) starting `startS`, with these attributes (strings, or numbers as doubles). */
export function otlpSpan(
  attributes: Record<string, string | number>,
  startS = Math.floor(Date.now() / 1000) - 60,
  status?: number,
): object {
  const n = next++;
  const start = BigInt(startS) * 1_000_000_000n;
  return {
    traceId: n.toString(16).padStart(32, 'a'),
    spanId: n.toString(16).padStart(16, 'b'),
    name: 'invoke_skill',
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 250_000_000n),
    attributes: Object.entries(attributes).map(([key, v]) => attr(key, typeof v === 'number' ? { doubleValue: v } : v)),
    ...(status !== undefined ? { status: { code: status } } : {}),
  };
}
