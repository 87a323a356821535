/**
 * POST /v1/logs with the events Claude Code and OpenAI Codex emit (shapes from their documented
 * event schemas: names, attributes, values as strings), in OTLP/JSON and protobuf: the skill's
 * statistics must equal a plain computation over the same events, following the mapping table of
 * docs/send-telemetry.md. Records that are no harness event are accepted, counted, not stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeLogsRequest } from '../../src/otlp/logs/decode.ts';
import { otlpLogsBody } from '../fixtures/otlp-body.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** One harness event as the harness emits it. */
interface HarnessEvent {
  harness: 'claude_code' | 'codex';
  name: string;
  /** Seconds since the epoch (the record's time_unix_nano). */
  at: number;
  attrs: Record<string, string | number | boolean>;
}

const NOW = Math.floor(Date.now() / 1000) - 3600;
const CLAUDE_RESOURCE = { 'service.name': 'claude-code', 'service.version': '2.1.0', 'workspace.id': 'ws-a-team' };
// Codex has no skill event: a team that runs it for one skill names the skill on the resource.
const CODEX_RESOURCE = { 'service.name': 'codex_cli_rs', env: 'dev', 'skill.name': 'summarize' };

function claude(name: string, at: number, prompt: string, attrs: HarnessEvent['attrs']): HarnessEvent {
  return {
    harness: 'claude_code',
    name,
    at,
    attrs: {
      'session.id': 'cc-session-1',
      'user.account_uuid': 'acct-claude',
      'user.id': 'install-1',
      'organization.id': 'org-uuid',
      'terminal.type': 'vscode',
      'prompt.id': prompt,
      'event.name': name,
      'event.timestamp': new Date(at * 1000).toISOString(),
      ...attrs,
    },
  };
}

function codex(name: string, at: number, attrs: HarnessEvent['attrs']): HarnessEvent {
  return {
    harness: 'codex',
    name,
    at,
    attrs: {
      'event.name': `codex.${name}`,
      'event.timestamp': new Date(at * 1000).toISOString(),
      'conversation.id': 'cx-conv-1',
      'app.version': '0.50.0',
      'user.account_id': 'acct-codex',
      'terminal.type': 'xterm',
      model: 'gpt-4o',
      slug: 'gpt-4o',
      ...attrs,
    },
  };
}

const EVENTS: HarnessEvent[] = [
  // Prompt p1 uses the skill: its events count for it.
  claude('user_prompt', NOW, 'p1', { prompt_length: '42', prompt: '<REDACTED>', command_name: 'review' }),
  claude('skill_activated', NOW + 1, 'p1', { 'skill.name': 'summarize', invocation_trigger: 'claude-proactive' }),
  claude('api_request', NOW + 3, 'p1', {
    model: 'claude-sonnet-4-5',
    cost_usd: '0.0125',
    duration_ms: '1800',
    input_tokens: '100',
    output_tokens: '50',
    cache_read_tokens: '10',
    cache_creation_tokens: '5',
    'skill.name': 'summarize',
  }),
  claude('tool_result', NOW + 4, 'p1', { tool_name: 'Read', success: 'true', duration_ms: '30', tool_use_id: 't1' }),
  claude('tool_result', NOW + 5, 'p1', {
    tool_name: 'mcp_tool',
    success: 'false',
    duration_ms: '400',
    error_type: 'ShellError',
    tool_parameters: JSON.stringify({ mcp_server_name: 'github', mcp_tool_name: 'search_issues' }),
  }),
  claude('api_error', NOW + 6, 'p1', {
    model: 'claude-sonnet-4-5',
    error: 'overloaded',
    status_code: 529,
    duration_ms: '90',
  }),
  claude('tool_decision', NOW + 6, 'p1', { tool_name: 'Edit', decision: 'accept', source: 'config' }),
  // Prompt p2 does not: none of its events count.
  claude('user_prompt', NOW + 60, 'p2', { prompt_length: '7', prompt: '<REDACTED>' }),
  claude('api_request', NOW + 62, 'p2', {
    model: 'claude-sonnet-4-5',
    cost_usd: '0.5',
    duration_ms: '900',
    input_tokens: '1000',
    output_tokens: '1000',
  }),
  claude('plugin_loaded', NOW + 63, 'p2', { 'plugin.name': 'x' }),
  // A Codex conversation run for the skill (resource skill.name).
  codex('conversation_starts', NOW + 100, { provider_name: 'openai', approval_policy: 'on-request' }),
  codex('user_prompt', NOW + 101, { prompt_length: '12', prompt: '[REDACTED]' }),
  codex('api_request', NOW + 102, { duration_ms: '700', 'http.response.status_code': 200, attempt: 1 }),
  codex('sse_event', NOW + 103, { 'event.kind': 'response.output_item.done', duration_ms: '5' }),
  codex('sse_event', NOW + 104, {
    'event.kind': 'response.completed',
    duration_ms: '1500',
    input_token_count: '200',
    output_token_count: '40',
    cached_token_count: 20,
  }),
  codex('tool_result', NOW + 105, {
    tool_name: 'shell',
    call_id: 'c1',
    arguments: '{"command":["ls"]}',
    duration_ms: '50',
    success: 'true',
    output: 'a\nb',
    mcp_server: '',
    mcp_server_origin: '',
  }),
];

/** The span category each event stands for (docs/send-telemetry.md), or null. */
function categoryOf(e: HarnessEvent): 'skill_invocation' | 'tool_call' | 'model_call' | 'other' | null {
  if (e.name === 'skill_activated') return 'skill_invocation';
  if (e.name === 'user_prompt') return e.harness === 'codex' ? 'skill_invocation' : 'other';
  if (e.name === 'tool_result') return 'tool_call';
  if (e.name === 'api_request') return e.harness === 'claude_code' ? 'model_call' : null;
  if (e.name === 'api_error') return 'model_call';
  if (e.name === 'sse_event') return e.attrs['event.kind'] === 'response.completed' ? 'model_call' : null;
  return null;
}

/** The plain computation: the events of the prompts (Claude Code) or conversations (Codex) that used the skill. */
function expected() {
  const traceOf = (e: HarnessEvent) => String(e.attrs['prompt.id'] ?? e.attrs['conversation.id']);
  const mapped = EVENTS.filter((e) => categoryOf(e) !== null);
  const skillTraces = new Set(mapped.filter((e) => categoryOf(e) === 'skill_invocation').map(traceOf));
  const counted = mapped.filter((e) => skillTraces.has(traceOf(e)));
  const n = (v: unknown) => Number(v ?? 0);
  let tokens = 0;
  let cost = 0;
  for (const e of counted) {
    if (e.harness === 'claude_code' && e.name === 'api_request') {
      const a = e.attrs;
      tokens += n(a.input_tokens) + n(a.output_tokens) + n(a.cache_read_tokens) + n(a.cache_creation_tokens);
      cost += n(a.cost_usd);
    }
    if (e.harness === 'codex' && e.name === 'sse_event') {
      tokens += n(e.attrs.input_token_count) + n(e.attrs.output_token_count);
      // gpt-4o in the price table: 2.5 USD per million input tokens, 1.25 per million of them read
      // from the cache (`cached_token_count`, a part of the input), 10 per million output.
      const cached = n(e.attrs.cached_token_count);
      cost +=
        ((n(e.attrs.input_token_count) - cached) * 2.5 + cached * 1.25 + n(e.attrs.output_token_count) * 10) / 1e6;
    }
  }
  const sessions = new Set(counted.map((e) => String(e.attrs['session.id'] ?? e.attrs['conversation.id'])));
  const users = new Set(counted.map((e) => String(e.attrs['user.account_uuid'] ?? e.attrs['user.account_id'])));
  return {
    spans: counted.length,
    traces: skillTraces.size,
    skill_invocations: counted.filter((e) => categoryOf(e) === 'skill_invocation').length,
    tool_calls: counted.filter((e) => categoryOf(e) === 'tool_call').length,
    tokens,
    cost,
    sessions: sessions.size,
    active_users: users.size,
    error_rate: 0,
    ignored: EVENTS.length - mapped.length,
  };
}

type AnyValue = { stringValue: string } | { intValue: number } | { boolValue: boolean };
const anyValue = (v: string | number | boolean): AnyValue =>
  typeof v === 'string' ? { stringValue: v } : typeof v === 'number' ? { intValue: v } : { boolValue: v };
const keyValues = (o: Record<string, string | number | boolean>) =>
  Object.entries(o).map(([key, v]) => ({ key, value: anyValue(v) }));

/** The events as an ExportLogsServiceRequest object, as each harness writes its records. */
function request(events: HarnessEvent[], encoding: 'json' | 'protobuf') {
  const nanos = (s: number) => (encoding === 'json' ? `${s}000000000` : BigInt(s) * 1_000_000_000n);
  const records = (h: HarnessEvent['harness']) =>
    events
      .filter((e) => e.harness === h)
      .map((e) => ({
        timeUnixNano: nanos(e.at),
        observedTimeUnixNano: nanos(e.at),
        severityNumber: 9,
        severityText: 'INFO',
        // Claude Code: the prefixed name in the body; Codex: an empty body, the name in event.name.
        ...(h === 'claude_code' ? { body: { stringValue: `claude_code.${e.name}` } } : {}),
        attributes: keyValues(e.attrs),
      }));
  return otlpLogsBody(
    {
      resource: keyValues(CLAUDE_RESOURCE),
      scope: { name: 'com.anthropic.claude_code.events' },
      records: records('claude_code'),
    },
    { resource: keyValues(CODEX_RESOURCE), records: records('codex') },
  );
}

function protobufBody(message: ReturnType<typeof request>): Buffer {
  // protobufjs wants 64-bit times as Long-like values or decimal strings.
  const json = JSON.parse(JSON.stringify(message, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  return encodeLogsRequest(json);
}

let t: TestApp;

async function post(body: Buffer | string, contentType: string, user = 'u-admin') {
  return t.app.inject({
    method: 'POST',
    url: '/v1/logs',
    headers: { ...(await t.auth(user)), 'content-type': contentType },
    payload: body,
  });
}

async function stats(queries: object[], extra: object = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    headers: await t.auth('u-admin'),
    payload: {
      start_time_unix_seconds: NOW - 3600,
      end_time_unix_seconds: NOW + 3600,
      request_type: 'scalar',
      queries,
      ...extra,
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const MEASURES = [
  'spans',
  'traces',
  'skill_invocations',
  'tool_calls',
  'tokens',
  'cost',
  'sessions',
  'active_users',
  'error_rate',
] as const;

async function scalars(): Promise<Record<string, number>> {
  const body = await stats(MEASURES.map((m) => ({ name: m, measure: m })));
  return Object.fromEntries(
    body.data.results.map((r: { query_name: string; value: number }) => [r.query_name, r.value]),
  );
}

describe.each(['json', 'protobuf'] as const)('POST /v1/logs with harness events (%s)', (encoding) => {
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('stores the events as spans whose statistics equal the plain computation; the rest is counted as ignored', async () => {
    const message = request(EVENTS, encoding);
    const res =
      encoding === 'json'
        ? await post(
            JSON.stringify(message, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
            'application/json',
          )
        : await post(protobufBody(message), 'application/x-protobuf');
    expect(res.statusCode, res.body).toBe(200);
    if (encoding === 'json') expect(res.json()).toEqual({});
    else expect(res.rawPayload.length).toBe(0); // an empty ExportLogsServiceResponse: nothing rejected

    const want = expected();
    const got = await scalars();
    expect(want).toMatchObject({ spans: 9, traces: 2, skill_invocations: 2, tool_calls: 3, tokens: 405 });
    for (const m of MEASURES) {
      if (m === 'cost') expect(got[m]).toBeCloseTo(want.cost, 9);
      else expect(got[m], m).toBe(want[m]);
    }
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain(`gateway_otlp_records_total{signal="logs",outcome="ignored"} ${want.ignored}`);
    expect(metrics.body).toContain(
      `gateway_otlp_records_total{signal="logs",outcome="stored"} ${EVENTS.length - want.ignored}`,
    );
  });

  it('dimensions: tools and MCP servers, models, commands and harnesses answer from the events', async () => {
    const table = async (dimension: string, measure = 'spans') => {
      const body = await stats([{ name: 'n', measure, group_by: [dimension] }], { request_type: 'table' });
      return Object.fromEntries(
        body.data.rows.map((r: { groups: Record<string, string>; values: { n: number } }) => [
          r.groups[dimension],
          r.values.n,
        ]),
      );
    };
    expect(await table('tool', 'tool_calls')).toEqual({ Read: 1, search_issues: 1, shell: 1, null: 0 });
    expect(await table('mcp', 'tool_calls')).toEqual({ github: 1, null: 2 });
    expect(await table('model', 'tokens')).toEqual({ 'claude-sonnet-4-5': 165, 'gpt-4o': 240, null: 0 });
    expect(await table('command')).toEqual({ review: 1, null: 8 });
    expect(await table('harness')).toEqual({ 'claude-code': 6, codex_cli_rs: 3 });
  });
});
