/**
 * What the console says of an insight (console/src/pages/insight-text.ts): each kind's key numbers
 * read from a payload of operation 4's schemas, and a window as whole UTC days or to the minute.
 */
import { describe, expect, it } from 'vitest';
import { keyNumbers, windowText } from '../../console/src/pages/insight-text.ts';
import { demoInsights } from '../../src/seed/demo-insights.ts';

const DAY = 86_400;
const D = 1_790_035_200; // a UTC midnight

describe('key numbers by kind', () => {
  const found = demoInsights({
    orgId: 'org',
    skills: [
      { id: 'sk-1', workspaceId: 'ws' },
      { id: 'sk-2', workspaceId: 'ws' },
    ],
    agents: [{ id: 'ag-1', workspaceId: 'ws' }],
    endS: D,
  });
  const text = (kind: string, subject: string) =>
    keyNumbers(kind, found.find((i) => i.kind === kind && i.subject.id === subject)?.payload ?? {});

  it('reads each kind’s own members', () => {
    expect(text('usage_summary', 'sk-1')).toBe('412 traces · 138 sessions · 21 users · 1,864,000 tokens · $9.84');
    expect(text('latency_regression', 'sk-1')).toBe('p90 4,820 ms against 2,310 ms (2.09×)');
    expect(text('cost_spike', 'sk-1')).toBe('$31.70 against a baseline of $8.90');
    expect(text('token_efficiency', 'sk-1')).toBe('6,840 tokens per trace, success 82.0 %');
    expect(text('tool_failure_hotspot', 'sk-2')).toBe('create_issue: 61 of 212 calls failed (28.8 %) and 1 more');
    expect(text('evaluation_drop', 'sk-2')).toBe('answer_relevance 0.64 against 0.83 (96 samples)');
    expect(text('latency_regression', 'ag-1')).toBe('p99 12,400 ms against 7,050 ms (1.76×)');
  });

  it('an unknown kind shows its numeric members; missing members show as none', () => {
    expect(keyNumbers('new_kind', { kind: 'new_kind', score_drop: 0.25, runs: 12, note: 'x' })).toBe(
      'score drop 0.25 · runs 12',
    );
    expect(keyNumbers('cost_spike', {})).toBe('– against a baseline of –');
    expect(keyNumbers('tool_failure_hotspot', { tools: [] })).toBe('no tool');
  });
});

describe('windows', () => {
  it('one UTC day as its date, several as first and last date, others to the minute', () => {
    expect(windowText(D, D + DAY)).toBe('2026-09-22');
    expect(windowText(D - 6 * DAY, D + DAY)).toBe('2026-09-16 to 2026-09-22');
    expect(windowText(D + 3600, D + 7200)).toBe('2026-09-22 01:00 to 2026-09-22 02:00');
  });
});
