/**
 * The OpenAPI document is complete and true: it passes Redocly's recommended lint, and every answer of
 * every operation (successes and errors, REST and the OTLP receiver) validates against the schema the
 * document gives for its path, method, status and content type.
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
let doc: {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: object }> }> }>
  >;
};
let text: string;
const ajv = new Ajv2020.default({ strict: false, allErrors: true });

beforeAll(async () => {
  t = await startTestApp();
  text = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).body;
  doc = JSON.parse(text) as typeof doc;
  ajv.addSchema(doc, 'openapi.json');
});
afterAll(async () => {
  await t.close();
});

const END = Date.UTC(2026, 9, 1) / 1000;
const STATS = {
  start_time_unix_seconds: END - 86400,
  end_time_unix_seconds: END,
  request_type: 'scalar',
  queries: [{ name: 'n', measure: 'spans' }],
};
const SPANS = otlpTraceBody({
  resource: attrs({ 'service.name': 'svc' }),
  spans: [
    { traceId: '01'.repeat(16), spanId: '02'.repeat(8), name: 's', startTimeUnixNano: '1', endTimeUnixNano: '2' },
  ],
});

interface Call {
  template: string;
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  raw?: string;
  user?: string | null;
  accept?: string;
  status: number;
}

const CALLS: Call[] = [
  {
    template: '/skill/v1/skills/{skill_id}/traces/stats/query',
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    body: STATS,
    status: 200,
  },
  {
    template: '/skill/v1/skills/{skill_id}/traces/stats/query',
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    body: { ...STATS, queries: [] },
    status: 422,
  },
  {
    template: '/skill/v1/skills/{skill_id}/traces/stats/query',
    method: 'POST',
    url: '/skill/v1/skills/nope/traces/stats/query',
    body: STATS,
    status: 404,
  },
  {
    template: '/agent/v1/agents/search',
    method: 'POST',
    url: '/agent/v1/agents/search',
    body: { query: 'parser' },
    status: 200,
  },
  {
    template: '/agent/v1/agents/search',
    method: 'POST',
    url: '/agent/v1/agents/search',
    body: { limit: 'x' },
    status: 422,
  },
  {
    template: '/agent/v1/agents/search',
    method: 'POST',
    url: '/agent/v1/agents/search',
    body: {},
    user: null,
    status: 401,
  },
  {
    template: '/mcp/v1/tools/aggregate',
    method: 'POST',
    url: '/mcp/v1/tools/aggregate',
    body: { group_by: ['server_id'] },
    status: 200,
  },
  { template: '/mcp/v1/tools/aggregate', method: 'POST', url: '/mcp/v1/tools/aggregate', raw: '{', status: 400 },
  { template: '/skill/v1/insights/schemas', method: 'GET', url: '/skill/v1/insights/schemas', status: 200 },
  {
    template: '/registry/v1/workspaces/{workspace_id}/export',
    method: 'GET',
    url: '/registry/v1/workspaces/ws-a-team/export',
    status: 200,
  },
  {
    template: '/registry/v1/workspaces/{workspace_id}/export',
    method: 'GET',
    url: '/registry/v1/workspaces/missing/export',
    status: 404,
  },
  { template: '/mcp/v1/tools', method: 'GET', url: '/mcp/v1/tools?limit=5', status: 200 },
  { template: '/mcp/v1/tools', method: 'GET', url: '/mcp/v1/tools?limit=-1', status: 400 },
  { template: '/registry/v1/users', method: 'GET', url: '/registry/v1/users', status: 200 },
  { template: '/registry/v1/users', method: 'GET', url: '/registry/v1/users', user: 'u-viewer-other-org', status: 401 },
  {
    template: '/agent/v1/agents/{agent_id}/profile-image',
    method: 'GET',
    url: '/agent/v1/agents/ag-1/profile-image',
    status: 200,
  },
  {
    template: '/agent/v1/agents/{agent_id}/profile-image',
    method: 'GET',
    url: '/agent/v1/agents/ag-1/profile-image',
    accept: 'image/png',
    status: 200,
  },
  {
    template: '/agent/v1/agents/{agent_id}/profile-image',
    method: 'GET',
    url: '/agent/v1/agents/nope/profile-image',
    status: 404,
  },
  { template: '/v1/traces', method: 'POST', url: '/v1/traces', body: SPANS, status: 200 },
  { template: '/v1/traces', method: 'POST', url: '/v1/traces', raw: '{"resourceSpans": 7}', status: 400 },
  { template: '/v1/traces', method: 'POST', url: '/v1/traces', body: SPANS, user: null, status: 401 },
];

describe('the OpenAPI document', () => {
  it("passes Redocly's recommended lint without a problem", async () => {
    const problems = await lintFromString({
      source: text,
      absoluteRef: 'openapi.json',
      config: await createConfig({ extends: ['recommended'] }),
    });
    expect(problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  });

  it('documents the OTLP receiver: request bodies, the 2XX answer and the OTLP Status of a 400', () => {
    const op = doc.paths['/v1/traces']?.post as unknown as {
      requestBody: { content: Record<string, unknown> };
      responses: Record<string, { content: Record<string, unknown> }>;
    };
    expect(Object.keys(op.requestBody.content).sort()).toEqual(['application/json', 'application/x-protobuf']);
    expect(Object.keys(op.responses['200']?.content ?? {}).sort()).toEqual([
      'application/json',
      'application/x-protobuf',
    ]);
    expect(Object.keys(op.responses['400']?.content ?? {})).toContain('application/x-protobuf');
    expect(op.responses['401']?.content).toHaveProperty(['application/problem+json']);
  });

  it.each(CALLS.map((c) => [`${c.method} ${c.url} -> ${c.status}${c.accept ? ` (${c.accept})` : ''}`, c] as const))(
    'the answer of %s validates against the document',
    async (_name, call) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (call.user !== null)
        Object.assign(
          headers,
          await t.auth(call.user ?? 'u-admin', call.user === 'u-viewer-other-org' ? 'org-zzz' : 'org-a'),
        );
      if (call.accept !== undefined) headers.accept = call.accept;
      const res = await t.app.inject({
        method: call.method,
        url: call.url,
        headers,
        ...(call.raw !== undefined
          ? { payload: call.raw }
          : call.body !== undefined
            ? { payload: JSON.stringify(call.body) }
            : {}),
      });
      expect(res.statusCode).toBe(call.status);
      const type = String(res.headers['content-type']).split(';')[0] ?? '';
      const operation = doc.paths[call.template]?.[call.method.toLowerCase()];
      const response = operation?.responses[String(call.status)];
      expect(response?.content, `status ${call.status} documented`).toHaveProperty([type]);
      if (!type.endsWith('json')) return;
      const pointer = [
        'paths',
        call.template,
        call.method.toLowerCase(),
        'responses',
        String(call.status),
        'content',
        type,
        'schema',
      ]
        .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      const validate = ajv.compile({ $ref: `openapi.json#/${pointer}` });
      expect(validate(res.json()), JSON.stringify(validate.errors)).toBe(true);
    },
  );
});
