/**
 * The values `traceStats` answers count against the operation's cost limit as they run: the static
 * cost prices `Agent.traceStats` under the unpaged `Skill.usedBy` at the list's assumed size (10),
 * so a skill used by 12 agents could otherwise answer 12 / 10 of the limit. Both paths (static
 * cost, and the points counted at run time) refuse with the limit named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smallBundle } from '../fixtures/small-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const AGENTS = 12;
const START = 1_767_225_600;
let t: TestApp;
beforeAll(async () => {
  const b = smallBundle();
  const ag2 = b.artifacts.find((a) => a.id === 'ag-2') as Record<string, unknown>;
  for (let i = 0; i < AGENTS; i++) {
    const id = `ag-x${i}`;
    b.artifacts.push({
      ...ag2,
      id,
      name: id,
      display_name: id,
      identity: undefined,
      content_hash_hex: (i + 10).toString(16).padEnd(64, 'f'),
    } as never);
    b.relationships.push({
      from: { id, kind: 'agent' },
      to: { id: 'sk-1', kind: 'skill' },
      rel_type: 'uses_skill',
      provenance: 'declared',
      relationship_status: 'active',
    });
  }
  t = await startTestApp({ bundle: b });
});
afterAll(async () => t.close());

/** A time series of 30 days by model, `limit` groups: 30 × limit values per agent. */
const query = (limit: number) => `{ skill(id: "sk-1") { usedBy { id traceStats(input: {
  startTimeUnixSeconds: ${START}, endTimeUnixSeconds: ${START + 30 * 86_400}, requestType: TIME_SERIES,
  bucket: DAY, queries: [{ name: "q", measure: SPANS, groupBy: [MODEL], limit: ${limit} }] }) { meta { warnings } } } } }`;

async function ask(q: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
    payload: JSON.stringify({ query: q }),
  });
  return res.json<{
    data?: { skill: { usedBy: { id: string; traceStats: unknown }[] } } | null;
    errors?: { extensions: { code: string; limit?: string; value?: number; max?: number } }[];
  }>();
}

describe('statistics answers under the cost limit', () => {
  it("answers while the agents' answers together stay under it", async () => {
    // 12 agents × 30 × 60 = 21,600 values.
    const body = await ask(query(60));
    expect(body.errors).toBeUndefined();
    expect(body.data?.skill.usedBy.filter((a) => a.id.startsWith('ag-x'))).toHaveLength(AGENTS);
  });

  it('refuses, as they run, answers that together pass it though the static cost did not', async () => {
    // Priced statically at 10 × 30 × 75 = 22,500 (under 25,000); 12 agents hold 27,000.
    const body = await ask(query(75));
    const limits = (body.errors ?? []).map((e) => e.extensions);
    expect(limits.length).toBeGreaterThan(0);
    expect(limits[0]).toMatchObject({ code: 'OPERATION_TOO_LARGE', limit: 'cost', max: 25_000 });
    expect(limits[0]?.value).toBeGreaterThan(25_000);
  });
});
