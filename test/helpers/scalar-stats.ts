/**
 * Operation 1 as a scalar query through the app, answered as `{ query name: value }`: what the
 * telemetry tests compare with the spans they sent.
 */
import { expect } from 'vitest';
import type { TestApp } from './test-app.ts';

export async function scalarStats(
  t: TestApp,
  opts: { skill: string; start: number; end: number; measures: Record<string, string>; user?: string },
): Promise<Record<string, number | null>> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/skill/v1/skills/${opts.skill}/traces/stats/query`,
    headers: await t.auth(opts.user ?? 'u-admin'),
    payload: {
      start_time_unix_seconds: opts.start,
      end_time_unix_seconds: opts.end,
      request_type: 'scalar',
      queries: Object.entries(opts.measures).map(([name, measure]) => ({ name, measure })),
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return Object.fromEntries(
    res.json().data.results.map((r: { query_name: string; value: number | null }) => [r.query_name, r.value]),
  );
}
