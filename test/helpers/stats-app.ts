/**
 * The app of the operation-1 tests: the small bundle and 3,000 generated spans of sk-1 (ws-a-team)
 * over 28 days before END, by u-admin and u-viewer; `spans` are the rows the reference computes from.
 */
import type { SpanRow } from '../../src/store/trace-port.ts';
import { demoSpans } from '../../src/seed/demo-traces.ts';
import { startTestApp, type TestApp } from './test-app.ts';

export const END = Date.UTC(2026, 9, 1) / 1000;

export async function startStatsApp(seed: number): Promise<{ t: TestApp; spans: SpanRow[] }> {
  const t = await startTestApp();
  const spans: SpanRow[] = [];
  for (const b of demoSpans({
    orgId: 'org-a',
    skills: [{ id: 'sk-1', workspaceId: 'ws-a-team' }],
    users: ['u-admin', 'u-viewer'],
    spans: 3000,
    endS: END,
    days: 28,
    seed,
  }))
    spans.push(...b);
  await t.traces.insertSpans(spans);
  return { t, spans };
}
