/**
 * What a span may claim of an agent, on both engines (PostgreSQL when reachable). A free
 * `gen_ai.agent.name` that is a registry agent's id never counts for that agent, whoever sends it;
 * and a trace belongs to an agent for a caller only through a span the caller may read: a span in
 * another workspace that names the agent neither pulls the caller's own spans of that trace into
 * the agent's statistics nor tells the caller that it named the agent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { TEST_API_KEY, smallBundle } from '../fixtures/small-bundle.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const AT = Date.UTC(2026, 9, 1) / 1000;
const T0 = '2026-01-01T00:00:00Z';

/**
 * The small bundle (ag-1 in ws-a-team, ag-2 in ws-a-sub, a child of ws-a-team), plus u-other,
 * editor of ws-a-other only (it reads neither agent), u-lead, editor of ws-a-team (it reads both
 * and writes ws-a-team), and u-sub, editor of ws-a-sub only (it reads ag-2, not ws-a-team).
 */
function bundle() {
  const b = smallBundle();
  for (const [id, ws] of [
    ['u-other', 'ws-a-other'],
    ['u-lead', 'ws-a-team'],
    ['u-sub', 'ws-a-sub'],
  ] as const) {
    b.users.push({ id, org_id: 'org-a', name: id, created_at: T0, updated_at: T0 });
    b.memberships.push({ workspace_id: ws, user_id: id, role: 'editor' });
  }
  return b;
}

let n = 0;
function span(trace: string, attributes: Record<string, string>) {
  n++;
  const start = BigInt(AT + n) * 1_000_000_000n;
  return {
    traceId: trace,
    spanId: n.toString(16).padStart(16, 'c'),
    name: 'invoke_agent',
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 5_000_000n),
    attributes: attrs({ 'gen_ai.operation.name': 'invoke_agent', ...attributes }),
  };
}

function claimsSuite(engine: string, env: () => Record<string, string>) {
  describe(`what a span may claim of an agent (${engine})`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ bundle: bundle(), env: env() });
    });
    afterAll(async () => t.close());

    async function send(auth: Record<string, string>, workspace: string, spans: object[]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: JSON.stringify(otlpTraceBody({ resource: attrs({ 'workspace.id': workspace }), spans })),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({});
    }

    /** [spans, traces] of the agent as `user` sees them. */
    async function stats(agent: string, user = 'u-admin'): Promise<[number, number]> {
      const res = await t.app.inject({
        method: 'POST',
        url: `/agent/v1/agents/${agent}/traces/stats/query`,
        headers: await t.auth(user),
        payload: {
          start_time_unix_seconds: AT,
          end_time_unix_seconds: AT + 3600,
          request_type: 'scalar',
          queries: [
            { name: 's', measure: 'spans' },
            { name: 't', measure: 'traces' },
          ],
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      const [s, tr] = res.json<{ data: { results: { value: number }[] } }>().data.results;
      return [s?.value as number, tr?.value as number];
    }

    it("a free name that is an agent's id counts for no agent, from a user or another agent's key", async () => {
      const before = await stats('ag-1');
      // u-other cannot read ag-1: by name only.
      await send(await t.auth('u-other'), 'ws-a-other', [span('1'.repeat(32), { 'gen_ai.agent.name': 'ag-1' })]);
      // ag-2's key: an unreadable id with the same name falls back to ag-2 itself.
      await send({ authorization: `Bearer ${TEST_API_KEY}` }, 'ws-a-sub', [
        span('2'.repeat(32), { 'gen_ai.agent.id': 'ag-1', 'gen_ai.agent.name': 'ag-1' }),
      ]);
      expect(await stats('ag-1')).toEqual(before);
      expect(await stats('ag-2')).toEqual([1, 1]);
      // A name that is no registry id is kept as sent (and counts for no registry agent).
      await send(await t.auth('u-other'), 'ws-a-other', [
        span('3'.repeat(32), { 'gen_ai.agent.name': 'langgraph-supervisor' }),
      ]);
      expect(await stats('ag-1')).toEqual(before);
    });

    it('a span the caller cannot read does not pull its trace into an agent for that caller', async () => {
      const trace = '4'.repeat(32);
      // u-sub's own span, naming no agent, in ws-a-sub.
      await send(await t.auth('u-sub'), 'ws-a-sub', [span(trace, {})]);
      const mine = await stats('ag-2', 'u-sub');
      // u-lead names ag-2 in the same trace, from ws-a-team, which u-sub cannot read.
      await send(await t.auth('u-lead'), 'ws-a-team', [span(trace, { 'gen_ai.agent.id': 'ag-2' })]);
      expect(await stats('ag-2', 'u-sub')).toEqual(mine);
      // The organization's admin reads both spans: the trace is ag-2's, with both.
      expect(await stats('ag-2', 'u-admin')).toEqual([1 + 2, 1 + 1]);
    });
  });
}

claimsSuite('sqlite and duckdb', () => ({}));

const server = await fileDatabase('gw_agent_claims');
if (server !== null) claimsSuite('postgres', () => server);
