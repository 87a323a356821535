/**
 * The analytics series' labels (console/src/pages/series.ts): group values that are registry ids
 * the page knows show the name, a name two of them share also the id, anything else as sent.
 */
import { describe, expect, it } from 'vitest';
import { namesById, toCsv, type StatsAnswer } from '../../console/src/pages/series.ts';

const point = (value: number | null) => [{ timestamp_unix_seconds: 86_400, value }];

const answer: StatsAnswer = {
  data: {
    request_type: 'time_series',
    series: [
      { query_name: 'calls', measure: 'traces', unit: null, groups: { agent: 'agent-0001' }, points: point(4) },
      { query_name: 'calls', measure: 'traces', unit: null, groups: { agent: 'agent-0002' }, points: point(3) },
      { query_name: 'calls', measure: 'traces', unit: null, groups: { agent: 'agent-0003' }, points: point(2) },
      {
        query_name: 'calls',
        measure: 'traces',
        unit: null,
        groups: { agent: 'langgraph-supervisor' },
        points: point(1),
      },
      { query_name: 'calls', measure: 'traces', unit: null, groups: { agent: null }, points: point(0) },
    ],
  },
  meta: { warnings: [] },
  comparison: null,
};

describe('series labels', () => {
  it('show known agents by name, a shared name with its id, other values as sent', () => {
    const names = namesById([
      { id: 'agent-0001', name: 'Invoice Parser' },
      { id: 'agent-0002', name: 'Support Analyst' },
      { id: 'agent-0003', name: 'Support Analyst' },
    ]);
    expect(toCsv(answer, (v) => v, { agent: names }).header).toEqual([
      'bucket_start_utc',
      'calls agent=Invoice Parser',
      'calls agent=Support Analyst (agent-0002)',
      'calls agent=Support Analyst (agent-0003)',
      'calls agent=langgraph-supervisor',
      'calls agent=none',
    ]);
    // Names apply to their own dimension only; without names every value is as sent.
    expect(toCsv(answer, (v) => v, { skill: names }).header[1]).toBe('calls agent=agent-0001');
    expect(toCsv(answer, (v) => v).header[1]).toBe('calls agent=agent-0001');
  });
});
