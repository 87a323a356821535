/**
 * An agent reports the skills it declares: its service account may send spans naming a skill its
 * agent uses (an active `uses_skill` relationship to a skill of its organization) even where the
 * account cannot read that skill; the spans land in the account's own workspace and count in the
 * skill's statistics. A skill not declared, declared by a removed relationship, or of another
 * organization stays refused. On both engines (PostgreSQL when reachable).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpSpan } from '../abuse/fixture.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { TEST_API_KEY, smallBundle } from '../fixtures/small-bundle.ts';
import { fileDatabase } from '../helpers/pg-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const T0 = '2026-01-01T00:00:00Z';
const AT = Date.UTC(2026, 5, 1) / 1000;
const AGENT = { authorization: `Bearer ${TEST_API_KEY}` };
const OTHER_KEY = 'agk_otherkey00000000000000000000000000';
const OTHER_AGENT = { authorization: `Bearer ${OTHER_KEY}` };

/**
 * The small bundle, where ag-2 (ws-a-sub, API key) reads only ws-a-sub, plus: sk-2 "translate" and
 * sk-3 "classify" in ws-a-other; ag-2 uses_skill sk-1 (ws-a-team) and sk-b1 (org-b), both active,
 * and sk-2 by a removed relationship; ag-5, another agent of ws-a-sub with an API key, declares nothing.
 */
function bundle() {
  const b = smallBundle();
  const sk1 = b.artifacts.find((a) => a.id === 'sk-1') as Record<string, unknown>;
  const skill = (id: string, name: string) => ({
    ...sk1,
    id,
    name,
    display_name: name,
    workspace_id: 'ws-a-other',
    content_hash_hex: id.replace('sk-', 'c').padEnd(64, '0'),
    created_at: T0,
    updated_at: T0,
  });
  b.artifacts.push(skill('sk-2', 'translate') as never, skill('sk-3', 'classify') as never);
  const ag2 = b.artifacts.find((a) => a.id === 'ag-2') as Record<string, unknown>;
  b.artifacts.push({
    ...ag2,
    id: 'ag-5',
    name: 'Other Bot',
    display_name: 'Other Bot',
    content_hash_hex: 'a5'.padEnd(64, '0'),
    identity: { client_id: 'key-ag-5', credential_kind: 'api_key', api_key: OTHER_KEY },
  } as never);
  const uses = (to: string, status: string) => ({
    from: { id: 'ag-2', kind: 'agent' },
    to: { id: to, kind: 'skill' },
    rel_type: 'uses_skill',
    provenance: 'declared',
    relationship_status: status,
  });
  b.relationships.push(uses('sk-1', 'active'), uses('sk-b1', 'active'), uses('sk-2', 'removed'));
  return b;
}

const body = (spans: object[]) => JSON.stringify(otlpTraceBody({ resource: attrs({}), spans }));

async function sent(t: TestApp, spans: object[], auth: Record<string, string>) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: body(spans),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ partialSuccess?: { rejectedSpans: number; errorMessage: string } }>();
}

/** Spans of `skill` in `workspace` during the hour at AT, as u-admin (who reads the whole org) counts them. */
async function spansOf(t: TestApp, skill: string, workspace: string): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/skill/v1/skills/${skill}/traces/stats/query`,
    headers: await t.auth('u-admin'),
    payload: {
      start_time_unix_seconds: AT,
      end_time_unix_seconds: AT + 3600,
      request_type: 'scalar',
      workspace_id: workspace,
      queries: [{ name: 'n', measure: 'spans' }],
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: { results: { value: number }[] } }>().data.results[0]?.value as number;
}

function declaredSkillsSuite(engine: string, env: () => Record<string, string>) {
  describe(`skills an agent declares (${engine})`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ bundle: bundle(), env: env() });
    });
    afterAll(async () => {
      await t.close();
    });

    it("counts a declared skill the agent's account cannot read, by id and by name, in the account's workspace", async () => {
      const answer = await sent(
        t,
        [otlpSpan({ 'skill.id': 'sk-1' }, AT), otlpSpan({ 'skill.name': 'summarize' }, AT + 60)],
        AGENT,
      );
      expect(answer).toEqual({});
      expect(await spansOf(t, 'sk-1', 'ws-a-sub')).toBe(2);
      expect(await spansOf(t, 'sk-1', 'ws-a-team')).toBe(0);
    });

    it('refuses a skill not declared, declared by a removed relationship, or of another organization', async () => {
      const answer = await sent(
        t,
        [
          otlpSpan({ 'skill.id': 'sk-3' }, AT),
          otlpSpan({ 'skill.id': 'sk-2' }, AT),
          otlpSpan({ 'skill.name': 'translate' }, AT),
          otlpSpan({ 'skill.id': 'sk-b1' }, AT),
        ],
        AGENT,
      );
      expect(answer).toEqual({
        partialSuccess: {
          rejectedSpans: 4,
          errorMessage: [
            '1 span(s): skill "sk-3" does not exist or the sender cannot read it',
            '1 span(s): skill "sk-2" does not exist or the sender cannot read it',
            '1 span(s): skill named "translate" does not exist or the sender cannot read it',
            '1 span(s): skill "sk-b1" does not exist or the sender cannot read it',
          ].join('; '),
        },
      });
      expect(await spansOf(t, 'sk-3', 'ws-a-sub')).toBe(0);
      expect(await spansOf(t, 'sk-2', 'ws-a-sub')).toBe(0);
    });

    it("another agent's account in the same workspace is refused what ag-2 declares", async () => {
      const answer = await sent(t, [otlpSpan({ 'skill.id': 'sk-1' }, AT)], OTHER_AGENT);
      expect(answer).toEqual({
        partialSuccess: {
          rejectedSpans: 1,
          errorMessage: '1 span(s): skill "sk-1" does not exist or the sender cannot read it',
        },
      });
    });
  });
}

declaredSkillsSuite('sqlite', () => ({}));

const server = await fileDatabase('gw_declared');
if (server !== null) declaredSkillsSuite('postgres', () => server);
