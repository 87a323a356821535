/**
 * POST /v1/metrics with Claude Code's counters (shapes from its documented metrics: names, `type`
 * attributes, the standard attributes, delta sums, `s` as the active-time unit), in OTLP/JSON and
 * protobuf, beside its events on /v1/logs: the harness measures of the skill must equal a plain
 * computation, counting the points of the sessions that used the skill and no other; what cannot
 * be stored is refused with its reason, what is not stored is counted as ignored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeLogsRequest } from '../../src/otlp/logs/decode.ts';
import { encodeMetricsRequest } from '../../src/otlp/metrics/decode.ts';
import { attrs, otlpLogsBody, otlpMetricsBody } from '../fixtures/otlp-body.ts';
import { gql } from '../graphql/helpers.ts';
import { scalarStats } from '../helpers/scalar-stats.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const NOW = Math.floor(Date.now() / 1000) - 3600;
const RESOURCE = { 'service.name': 'claude-code', 'service.version': '2.1.0', 'workspace.id': 'ws-a-team' };
const standard = (session: string) => ({
  'session.id': session,
  'user.account_uuid': 'acct-1',
  'organization.id': 'org-uuid',
  'terminal.type': 'vscode',
  'app.version': '2.1.0',
});

/** Session s-skill activates the skill; s-other works without it. */
function events(encoding: 'json' | 'protobuf') {
  const record = (at: number, session: string, prompt: string, name: string, extra: Record<string, string>) => ({
    timeUnixNano: encoding === 'json' ? `${at}000000000` : String(BigInt(at) * 1_000_000_000n),
    body: { stringValue: `claude_code.${name}` },
    attributes: attrs({ ...standard(session), 'prompt.id': prompt, 'event.name': name, ...extra }),
  });
  return otlpLogsBody({
    resource: attrs(RESOURCE),
    records: [
      record(NOW, 's-skill', 'p1', 'user_prompt', { prompt_length: '10' }),
      record(NOW + 1, 's-skill', 'p1', 'skill_activated', { 'skill.name': 'summarize' }),
      record(NOW + 5, 's-other', 'p2', 'user_prompt', { prompt_length: '3' }),
    ],
  });
}

interface Point {
  metric: string;
  session: string | null;
  at: number;
  value: number;
  type?: string;
  temporality?: 1 | 2;
}

const POINTS: Point[] = [
  { metric: 'claude_code.lines_of_code.count', session: 's-skill', at: NOW + 60, value: 120, type: 'added' },
  { metric: 'claude_code.lines_of_code.count', session: 's-skill', at: NOW + 60, value: 14, type: 'removed' },
  { metric: 'claude_code.lines_of_code.count', session: 's-skill', at: NOW + 120, value: 30, type: 'added' },
  { metric: 'claude_code.commit.count', session: 's-skill', at: NOW + 120, value: 2 },
  { metric: 'claude_code.pull_request.count', session: 's-skill', at: NOW + 180, value: 1 },
  { metric: 'claude_code.active_time.total', session: 's-skill', at: NOW + 60, value: 42.5, type: 'user' },
  { metric: 'claude_code.active_time.total', session: 's-skill', at: NOW + 60, value: 7.25, type: 'cli' },
  // Another session: stored, never counted for the skill.
  { metric: 'claude_code.lines_of_code.count', session: 's-other', at: NOW + 60, value: 999, type: 'added' },
  { metric: 'claude_code.commit.count', session: 's-other', at: NOW + 60, value: 5 },
  // Refused: cumulative, no session.
  { metric: 'claude_code.commit.count', session: 's-skill', at: NOW + 240, value: 50, temporality: 2 },
  { metric: 'claude_code.pull_request.count', session: null, at: NOW + 240, value: 3 },
  // Not stored (the events answer them): counted as ignored.
  { metric: 'claude_code.session.count', session: 's-skill', at: NOW + 60, value: 1 },
  { metric: 'claude_code.token.usage', session: 's-skill', at: NOW + 60, value: 800, type: 'input' },
  { metric: 'claude_code.cost.usage', session: 's-skill', at: NOW + 60, value: 0.2 },
];

const STORED: Record<string, string> = {
  'claude_code.commit.count': 'commits',
  'claude_code.pull_request.count': 'pull_requests',
  'claude_code.active_time.total': 'active_time',
};
const measureOf = (p: Point) =>
  p.metric === 'claude_code.lines_of_code.count' ? `lines_${p.type}` : (STORED[p.metric] ?? null);
const refused = (p: Point) => measureOf(p) !== null && (p.temporality === 2 || p.session === null);

/** The plain computation: the delta points of the sessions that used the skill, per measure. */
function expected(): Record<string, number> {
  const out: Record<string, number> = {
    lines_added: 0,
    lines_removed: 0,
    commits: 0,
    pull_requests: 0,
    active_time: 0,
  };
  for (const p of POINTS) {
    const m = measureOf(p);
    if (m !== null && !refused(p) && p.session === 's-skill') out[m] = (out[m] as number) + p.value;
  }
  return out;
}

/** One metric per point, as an exporter writes a delta or cumulative sum. */
function metrics(encoding: 'json' | 'protobuf') {
  return otlpMetricsBody({
    resource: attrs(RESOURCE),
    scope: { name: 'com.anthropic.claude_code', version: '2.1.0' },
    metrics: POINTS.map((p) => ({
      name: p.metric,
      unit: p.metric.endsWith('active_time.total') ? 's' : '',
      sum: {
        aggregationTemporality: p.temporality ?? 1,
        isMonotonic: true,
        dataPoints: [
          {
            startTimeUnixNano: `${p.at - 60}000000000`,
            timeUnixNano: `${p.at}000000000`,
            ...(Number.isInteger(p.value)
              ? { asInt: encoding === 'json' ? String(p.value) : p.value }
              : { asDouble: p.value }),
            attributes: attrs({
              ...(p.session === null ? {} : standard(p.session)),
              ...(p.type === undefined ? {} : { type: p.type }),
            }),
          },
        ],
      },
    })),
  });
}

let t: TestApp;

async function post(signal: 'logs' | 'metrics', message: object, encoding: 'json' | 'protobuf') {
  const protobuf = encoding === 'protobuf';
  const body = protobuf
    ? signal === 'logs'
      ? encodeLogsRequest(message)
      : encodeMetricsRequest(message)
    : JSON.stringify(message);
  return t.app.inject({
    method: 'POST',
    url: `/v1/${signal}`,
    headers: { ...(await t.auth('u-admin')), 'content-type': protobuf ? 'application/x-protobuf' : 'application/json' },
    payload: body,
  });
}

describe.each(['json', 'protobuf'] as const)('POST /v1/metrics with Claude Code counters (%s)', (encoding) => {
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('the skill statistics count the points of its sessions; refusals and the ignored are reported', async () => {
    expect((await post('logs', events(encoding), encoding)).statusCode).toBe(200);
    const res = await post('metrics', metrics(encoding), encoding);
    expect(res.statusCode, res.body).toBe(200);
    if (encoding === 'json') {
      const partial = res.json().partialSuccess;
      expect(Number(partial.rejectedDataPoints)).toBe(POINTS.filter(refused).length);
      expect(partial.errorMessage).toContain('1 data point(s): claude_code.commit.count: only delta sums are stored');
      expect(partial.errorMessage).toContain('1 data point(s): no session.id attribute');
    } else expect(res.rawPayload.length).toBeGreaterThan(0);

    const want = expected();
    expect(want).toEqual({ lines_added: 150, lines_removed: 14, commits: 2, pull_requests: 1, active_time: 49.75 });
    const got = await scalarStats(t, {
      skill: 'sk-1',
      start: NOW - 3600,
      end: NOW + 3600,
      measures: Object.fromEntries(Object.keys(want).map((m) => [m, m])),
    });
    expect(got).toEqual(want);

    const body = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const stored = POINTS.filter((p) => measureOf(p) !== null && !refused(p)).length;
    expect(body).toContain(`gateway_otlp_records_total{signal="metrics",outcome="stored"} ${stored}\n`);
    expect(body).toContain(`gateway_otlp_records_total{signal="metrics",outcome="rejected"} 2\n`);
    expect(body).toContain(`gateway_otlp_records_total{signal="metrics",outcome="ignored"} 3\n`);
  });

  it('refuses a point more than a day ahead of the receiver, storing nothing of it', async () => {
    const ahead = Math.floor(Date.now() / 1000) + 2 * 86_400;
    const message = otlpMetricsBody({
      resource: attrs(RESOURCE),
      metrics: [
        {
          name: 'claude_code.commit.count',
          sum: {
            aggregationTemporality: 1,
            isMonotonic: true,
            dataPoints: [
              {
                timeUnixNano: `${ahead}000000000`,
                asInt: encoding === 'json' ? '5' : 5,
                attributes: attrs(standard('s-skill')),
              },
            ],
          },
        },
      ],
    });
    const before = await scalarStats(t, {
      skill: 'sk-1',
      start: NOW - 3600,
      end: ahead + 3600,
      measures: { commits: 'commits' },
    });
    const res = await post('metrics', message, encoding);
    expect(res.statusCode, res.body).toBe(200);
    if (encoding === 'json')
      expect(res.json().partialSuccess).toEqual({
        rejectedDataPoints: 1,
        errorMessage: "1 data point(s): a start time more than a day ahead of the receiver's clock",
      });
    expect(
      await scalarStats(t, { skill: 'sk-1', start: NOW - 3600, end: ahead + 3600, measures: { commits: 'commits' } }),
    ).toEqual(before);
  });

  it('a day series and a table by user carry the points in their own bucket and group', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/skill/v1/skills/sk-1/traces/stats/query',
      headers: await t.auth('u-admin'),
      payload: {
        start_time_unix_seconds: NOW - 3600,
        end_time_unix_seconds: NOW + 3600,
        request_type: 'table',
        queries: [
          { name: 'added', measure: 'lines_added', group_by: ['user'] },
          { name: 'time', measure: 'active_time', group_by: ['user'] },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.columns).toContainEqual({ name: 'time', column_type: 'measure', unit: 's' });
    expect(body.data.columns).toContainEqual({ name: 'added', column_type: 'measure', unit: 'lines' });
    expect(body.data.rows).toEqual([{ groups: { user: 'acct-1' }, values: { added: 150, time: 49.75 } }]);
  });

  it('GraphQL traceStats answers the harness measures by their enum values', async () => {
    const res = await gql(
      t,
      `{ skill(id: "sk-1") { traceStats(input: { startTimeUnixSeconds: ${NOW - 3600}, endTimeUnixSeconds: ${NOW + 3600}, requestType: SCALAR,
        queries: [{ name: "a", measure: LINES_ADDED }, { name: "t", measure: ACTIVE_TIME }, { name: "p", measure: PULL_REQUESTS }] })
        { data { ... on ScalarStats { results { queryName measure value unit } } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.skill.traceStats.data.results).toEqual([
      { queryName: 'a', measure: 'LINES_ADDED', value: 150, unit: 'lines' },
      { queryName: 't', measure: 'ACTIVE_TIME', value: 49.75, unit: 's' },
      { queryName: 'p', measure: 'PULL_REQUESTS', value: 1, unit: 'count' },
    ]);
  });

  it('a user who may not write to the resource workspace gets the points refused, nothing stored', async () => {
    const before = await scalarStats(t, {
      skill: 'sk-1',
      start: NOW - 3600,
      end: NOW + 3600,
      measures: { commits: 'commits' },
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/metrics',
      headers: { ...(await t.auth('u-b', 'org-b')), 'content-type': 'application/json' },
      payload: JSON.stringify(metrics('json')),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().partialSuccess.errorMessage).toContain('no permission to write to workspace "ws-a-team"');
    expect(
      await scalarStats(t, { skill: 'sk-1', start: NOW - 3600, end: NOW + 3600, measures: { commits: 'commits' } }),
    ).toEqual(before);
  });
});
