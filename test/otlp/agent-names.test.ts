/**
 * Agent names as sent are bounded at ingestion (otlp/ingest.ts, store/agent-names.ts), on both
 * trace engines: at most OTLP_MAX_AGENT_NAMES distinct `gen_ai.agent.name` values a workspace and
 * UTC day are kept; past them a span is stored all the same, as it would be without the name (no
 * agent for a user, the sender's own agent for a service account), and partial_success says how
 * many, with nothing rejected. Registry agents never count. The abusive case: one sender's 5,000
 * made-up names in one request leave 100 agent subjects for detection, not 5,000.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpSpan } from '../abuse/fixture.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { TEST_API_KEY } from '../fixtures/small-bundle.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const AT = Date.UTC(2026, 5, 1, 12) / 1000;
const DAY = 86400;
const NOTE =
  /^(\d+) span\(s\) stored without their gen_ai\.agent\.name: their workspace holds 3 distinct agent names that day \(OTLP_MAX_AGENT_NAMES\)$/;

const engines: [string, () => Record<string, string>][] = [['sqlite and duckdb', () => ({})]];
const server = await fileDatabase('gw_agent_names');
if (server !== null) engines.push(['postgres', () => server]);

for (const [engine, env] of engines) {
  describe(`agent names as sent, at most 3 a workspace and day: ${engine}`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ env: { ...env(), OTLP_MAX_AGENT_NAMES: '3' } });
    });
    afterAll(async () => {
      await t.close();
    });

    /** Sends one span per name (a name, or attributes) and answers the OTLP answer's body. */
    async function send(
      names: (string | Record<string, string>)[],
      headers: Record<string, string>,
      { workspace = 'ws-a-team', at = AT } = {},
    ) {
      const spans = names.map((n) =>
        otlpSpan(typeof n === 'string' ? { 'gen_ai.agent.name': n, 'gen_ai.operation.name': 'chat' } : n, at),
      );
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify(otlpTraceBody({ resource: attrs({ 'workspace.id': workspace }), spans })),
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ partialSuccess?: { rejectedSpans?: number | string; errorMessage?: string } }>();
    }

    /** The agent subjects of org-a's spans in [from, from + 1 day) per workspace: `ws agent spans`. */
    async function agents(from = AT - 3600) {
      const page = await t.traces.subjectFacts({
        orgId: 'org-a',
        subjectType: 'agent',
        windows: [{ startS: from, endS: from + DAY }],
        limit: 1000,
        after: null,
      });
      return page.rows.map((r) => `${r.workspaceId} ${r.subject} ${r.traces}`);
    }

    it('keeps the first 3 names of a workspace and day; the others are stored without theirs, and said so', async () => {
      const body = await send(['n1', 'n2', 'n1', 'n3', 'n4', 'n5'], await t.auth('u-admin'));
      expect(Number(body.partialSuccess?.rejectedSpans ?? 0)).toBe(0);
      expect(body.partialSuccess?.errorMessage).toMatch(NOTE);
      expect(body.partialSuccess?.errorMessage?.match(NOTE)?.[1]).toBe('2');
      expect(await t.traces.countSpans()).toBe(6);
      expect(await agents()).toEqual(['ws-a-team n1 2', 'ws-a-team n2 1', 'ws-a-team n3 1']);
    });

    it('keeps a name kept before, refuses new ones that day, and counts other days and workspaces apart', async () => {
      const admin = await t.auth('u-admin');
      expect(await send(['n3', 'n2'], admin)).toEqual({});
      expect((await send(['n6'], admin)).partialSuccess?.errorMessage?.match(NOTE)?.[1]).toBe('1');
      expect(await send(['n6', 'n7'], admin, { at: AT + DAY })).toEqual({});
      expect(await send(['n6'], admin, { workspace: 'ws-a-other' })).toEqual({});
      expect(await agents(AT + DAY - 3600)).toEqual(['ws-a-team n6 1', 'ws-a-team n7 1']);
    });

    it('never counts a registry agent, and gives a refused name of a service account its own agent', async () => {
      const admin = await t.auth('u-admin');
      // ws-a-team holds 3 names that day: a registry agent by id is kept all the same.
      expect(await send([{ 'gen_ai.agent.id': 'ag-1', 'gen_ai.agent.name': 'Invoice Parser' }], admin)).toEqual({});
      // ag-2's account writes to ws-a-sub: 3 names kept, the fourth span is ag-2's.
      const account = { authorization: `Bearer ${TEST_API_KEY}` };
      const body = await send(['s1', 's2', 's3', 's4'], account, { workspace: 'ws-a-sub' });
      expect(body.partialSuccess?.errorMessage?.match(NOTE)?.[1]).toBe('1');
      const all = await agents();
      expect(all.filter((a) => a.startsWith('ws-a-sub'))).toEqual([
        'ws-a-sub ag-2 1',
        'ws-a-sub s1 1',
        'ws-a-sub s2 1',
        'ws-a-sub s3 1',
      ]);
      expect(all).toContain('ws-a-team ag-1 1');
    });
  });
}

describe('one sender making up 5,000 agent names in one request', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { OTLP_MAX_AGENT_NAMES: '100' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('stores every span, 100 of them under their names: detection sees 100 agents, not 5,000', async () => {
    const spans = Array.from({ length: 5000 }, (_, i) =>
      otlpSpan({ 'gen_ai.agent.name': `aaaa-${String(i + 1).padStart(4, '0')}` }, AT),
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/traces',
      headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
      payload: JSON.stringify(otlpTraceBody({ resource: attrs({ 'workspace.id': 'ws-a-team' }), spans })),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().partialSuccess.errorMessage).toBe(
      '4900 span(s) stored without their gen_ai.agent.name: their workspace holds 100 distinct agent names that day (OTLP_MAX_AGENT_NAMES)',
    );
    expect(await t.traces.countSpans()).toBe(5000);
    const page = await t.traces.subjectFacts({
      orgId: 'org-a',
      subjectType: 'agent',
      windows: [{ startS: AT - 3600, endS: AT + 3600 }],
      limit: 1000,
      after: null,
    });
    expect(page.subjects).toBe(100);
    expect(page.rows.at(-1)?.subject).toBe('aaaa-0100');
  });
});
