/**
 * Provider, agent and cache tokens from OTLP spans to operation 1: the provider under its current
 * and older names, cache counts summed apart, and the agent as the rule of otlp/ingest.ts stores
 * it (a registry agent the sender can read, or its service account's own agent, by id; else the
 * name as sent; else none), never refusing a span for an agent it does not know.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpSpan } from '../abuse/fixture.ts';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { TEST_API_KEY, smallBundle } from '../fixtures/small-bundle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const AT = Date.UTC(2026, 5, 1) / 1000;
const TRACE = 'c0ffee'.padEnd(32, '1');
const AGENT_TRACE = 'c0ffee'.padEnd(32, '2');

/** The small bundle, where ag-2's account (API key) reads only ws-a-sub; ag-2 declares it uses sk-1. */
function bundle() {
  const b = smallBundle();
  b.relationships.push({
    from: { id: 'ag-2', kind: 'agent' },
    to: { id: 'sk-1', kind: 'skill' },
    rel_type: 'uses_skill',
    provenance: 'declared',
    relationship_status: 'active',
  });
  return b;
}

const inTrace = (trace: string, attributes: Record<string, string | number>, kind = 'chat') => ({
  ...(otlpSpan(attributes, AT) as Record<string, unknown>),
  traceId: trace,
  name: kind,
});

let t: TestApp;

async function send(spans: object[], headers: Record<string, string>, resource: Record<string, string> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(otlpTraceBody({ resource: attrs(resource), spans })),
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({});
}

beforeAll(async () => {
  t = await startTestApp({ bundle: bundle() });
  const model = (extra: Record<string, string | number>) => ({
    'gen_ai.operation.name': 'chat',
    'gen_ai.usage.input_tokens': 1000,
    'gen_ai.usage.output_tokens': 100,
    ...extra,
  });
  // u-admin reads every workspace of org-a: ag-1 is a registry agent it can read, ag-b1 (org-b) is not.
  await send(
    [
      inTrace(TRACE, { 'skill.id': 'sk-1', 'gen_ai.agent.id': 'ag-1' }, 'invoke_skill'),
      inTrace(
        TRACE,
        model({
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'claude-sonnet-4',
          'gen_ai.usage.cache_read.input_tokens': 600,
          'gen_ai.usage.cache_creation.input_tokens': 200,
          'gen_ai.agent.id': 'ag-1',
        }),
      ),
      inTrace(
        TRACE,
        model({
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.usage.cache_read.input_tokens': 50,
          'gen_ai.agent.id': 'ag-b1',
          'gen_ai.agent.name': 'Invoice Bot',
        }),
      ),
      inTrace(TRACE, model({ 'gen_ai.system': 'openai', 'gen_ai.agent.id': 'no-such-agent' })),
    ],
    await t.auth('u-admin'),
    { 'workspace.id': 'ws-a-team' },
  );
  // ag-2's account: its own agent by id; ag-1 (ws-a-team) it cannot read, so the name as sent.
  await send(
    [
      inTrace(AGENT_TRACE, { 'skill.id': 'sk-1', 'gen_ai.agent.id': 'ag-2' }, 'invoke_skill'),
      inTrace(
        AGENT_TRACE,
        model({
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.usage.cache_read.input_tokens': 10,
          'gen_ai.agent.id': 'ag-1',
          'gen_ai.agent.name': 'Invoice Parser',
        }),
      ),
    ],
    { authorization: `Bearer ${TEST_API_KEY}` },
  );
});
afterAll(async () => {
  await t.close();
});

describe('provider, agent and cache tokens in skill statistics', () => {
  it('groups by provider and agent and sums cache tokens through the statistics endpoint', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/skill/v1/skills/sk-1/traces/stats/query',
      headers: await t.auth('u-admin'),
      payload: {
        start_time_unix_seconds: AT,
        end_time_unix_seconds: AT + 3600,
        request_type: 'table',
        queries: [
          { name: 'read', measure: 'cache_read_tokens', group_by: ['provider', 'agent'] },
          { name: 'created', measure: 'cache_creation_tokens', group_by: ['provider', 'agent'] },
          { name: 'spans', measure: 'spans', group_by: ['provider', 'agent'] },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.columns).toEqual([
      { name: 'provider', column_type: 'group', unit: null },
      { name: 'agent', column_type: 'group', unit: null },
      { name: 'read', column_type: 'measure', unit: 'tokens' },
      { name: 'created', column_type: 'measure', unit: 'tokens' },
      { name: 'spans', column_type: 'measure', unit: 'count' },
    ]);
    const rows = (body.data.rows as { groups: Record<string, string | null>; values: Record<string, number> }[])
      .map((r) => [r.groups.provider, r.groups.agent, r.values.read, r.values.created, r.values.spans])
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(rows).toEqual(
      [
        ['anthropic', 'ag-1', 600, 200, 1],
        ['anthropic', 'Invoice Parser', 10, 0, 1],
        ['openai', 'Invoice Bot', 50, 0, 1],
        ['openai', null, 0, 0, 1],
        [null, 'ag-1', 0, 0, 1],
        [null, 'ag-2', 0, 0, 1],
      ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
  });

  it('filters by agent', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/skill/v1/skills/sk-1/traces/stats/query',
      headers: await t.auth('u-admin'),
      payload: {
        start_time_unix_seconds: AT,
        end_time_unix_seconds: AT + 3600,
        request_type: 'scalar',
        queries: [
          {
            name: 'read',
            measure: 'cache_read_tokens',
            filters: [{ key: 'agent', op: 'eq', value: 'ag-1' }],
          },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.results[0]).toMatchObject({ measure: 'cache_read_tokens', value: 600, unit: 'tokens' });
  });
});
