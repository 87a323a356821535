/**
 * What each convention's spans become, one table per source (docs/send-telemetry.md, "Which
 * attributes are read"): every row is a span sent in a trace of an invocation of sk-1, read back
 * through the statistics endpoint (model, tool, tokens, cost, tool calls, error rate). Attribute
 * names come from `@opentelemetry/semantic-conventions` (incubating), so that a rename there fails
 * here; OpenInference's and Claude Code's names are constants below, citing where they are defined.
 */
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_COMPLETION_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_PROMPT_TOKENS,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_SESSION_ID,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  MCP_METHOD_NAME_VALUE_TOOLS_CALL,
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attr, attrs, otlpTraceBody } from '../fixtures/otlp-body.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * OpenInference semantic conventions (github.com/Arize-ai/openinference, spec/semantic_conventions.md
 * and python/openinference-semantic-conventions, `SpanAttributes`): the names Arize's
 * instrumentations emit.
 */
const OI = {
  SPAN_KIND: 'openinference.span.kind',
  LLM_MODEL_NAME: 'llm.model_name',
  LLM_PROVIDER: 'llm.provider',
  LLM_SYSTEM: 'llm.system',
  LLM_TOKEN_COUNT_PROMPT: 'llm.token_count.prompt',
  LLM_TOKEN_COUNT_COMPLETION: 'llm.token_count.completion',
  LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ: 'llm.token_count.prompt_details.cache_read',
  LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_WRITE: 'llm.token_count.prompt_details.cache_write',
  TOOL_NAME: 'tool.name',
} as const;

/**
 * Traceloop (OpenLLMetry) names, as `@traceloop/instrumentation-mcp` sets them on its MCP client
 * spans (`@traceloop/ai-semantic-conventions` SpanAttributes.TRACELOOP_SPAN_KIND,
 * TRACELOOP_ENTITY_NAME, TRACELOOP_ENTITY_INPUT; TraceloopSpanKindValues).
 */
const TL = {
  SPAN_KIND: 'traceloop.span.kind',
  ENTITY_NAME: 'traceloop.entity.name',
  ENTITY_INPUT: 'traceloop.entity.input',
} as const;
/** OTLP Span.SpanKind CLIENT. */
const CLIENT = 3;

/**
 * Claude Code's beta trace spans (CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1; code.claude.com/docs/en/monitoring-usage,
 * "Traces (beta)"): span names and the attributes they carry.
 */
const CC = {
  LLM_REQUEST: 'claude_code.llm_request',
  TOOL: 'claude_code.tool',
  INTERACTION: 'claude_code.interaction',
} as const;

const AT = Date.UTC(2026, 5, 1) / 1000;
type Value = string | number;

interface Row {
  what: string;
  attributes: Record<string, Value>;
  name?: string;
  /** Status code ERROR. */
  failed?: boolean;
  /** Span.SpanKind. */
  kind?: number;
  model: string | null;
  tool: string | null;
  tokens: number;
  cost: number;
  tool_calls: number;
  /** Error rate of the trace's skill invocations (the row's span is the invocation when it names sk-1). */
  error_rate?: number;
}

const M = 1_000_000;
// List prices of src/otlp/prices.ts (USD per million tokens).
const SONNET = { input: 3, output: 15, read: 0.3, write: 3.75 };
const GPT4O = { input: 2.5, output: 10, read: 1.25 };

let n = 0;
function span(
  name: string,
  attributes: Record<string, Value>,
  startS: number,
  traceId: string,
  failed = false,
  kind?: number,
) {
  n++;
  const start = BigInt(startS) * 1_000_000_000n;
  return {
    traceId,
    spanId: (n + 0x1000).toString(16).padStart(16, 'c'),
    name,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 500_000_000n),
    attributes: Object.entries(attributes).map(([k, v]) =>
      attr(k, typeof v === 'number' ? (Number.isInteger(v) ? { intValue: v } : { doubleValue: v }) : v),
    ),
    ...(failed ? { status: { code: 2 } } : {}),
    ...(kind === undefined ? {} : { kind }),
  };
}

async function sendRow(t: TestApp, row: Row, startS: number, service: string): Promise<void> {
  const traceId = (startS * 4096 + 0xabc).toString(16).padStart(32, 'd');
  const ownInvocation = row.attributes['skill.id'] === 'sk-1';
  const spans = [
    ...(ownInvocation ? [] : [span('invoke_skill', { 'skill.id': 'sk-1' }, startS, traceId)]),
    span(row.name ?? 'step', row.attributes, startS + 1, traceId, row.failed, row.kind),
  ];
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers: { ...(await t.auth('u-admin')), 'content-type': 'application/json' },
    payload: JSON.stringify(
      otlpTraceBody({ resource: attrs({ 'service.name': service, 'workspace.id': 'ws-a-team' }), spans }),
    ),
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({});
}

interface TableRow {
  groups: { model: string | null; tool: string | null };
  values: Record<string, number | null>;
}

async function statsOf(t: TestApp, startS: number): Promise<TableRow[]> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/skill/v1/skills/sk-1/traces/stats/query',
    headers: await t.auth('u-admin'),
    payload: {
      start_time_unix_seconds: startS,
      end_time_unix_seconds: startS + 3600,
      request_type: 'table',
      queries: ['tokens', 'cost', 'tool_calls', 'error_rate'].map((m) => ({
        name: m,
        measure: m,
        group_by: ['model', 'tool'],
      })),
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: { rows: TableRow[] } }>().data.rows;
}

function conventionSuite(source: string, service: string, rows: Row[]) {
  describe(`${source}: each row through the statistics endpoint`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(async () => {
      await t.close();
    });

    it.each(rows.map((r, i) => [r.what, r, i] as const))('%s', async (_what, row, i) => {
      const startS = AT + i * 3600;
      await sendRow(t, row, startS, service);
      const all = await statsOf(t, startS);
      const mine = all.find((r) => r.groups.model === row.model && r.groups.tool === row.tool);
      expect(mine, JSON.stringify(all)).toBeDefined();
      expect(mine?.values.tokens).toBe(row.tokens);
      expect(mine?.values.cost).toBeCloseTo(row.cost, 12);
      expect(mine?.values.tool_calls).toBe(row.tool_calls);
      const invocations = all.find((r) => r.groups.model === null && r.groups.tool === null);
      expect(invocations?.values.error_rate ?? null).toBe(row.error_rate ?? 0);
    });
  });
}

conventionSuite('OpenTelemetry GenAI semantic conventions 1.45', 'my-agent', [
  {
    what: 'a chat span: response model over request model, input and output tokens',
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      [ATTR_GEN_AI_PROVIDER_NAME]: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
      [ATTR_GEN_AI_REQUEST_MODEL]: 'gpt-4o',
      [ATTR_GEN_AI_RESPONSE_MODEL]: 'gpt-4o-2024-08-06',
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 1000,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 200,
    },
    model: 'gpt-4o-2024-08-06',
    tool: null,
    tokens: 1200,
    cost: (1000 * GPT4O.input + 200 * GPT4O.output) / M,
    tool_calls: 0,
  },
  {
    what: 'cache reads and writes are parts of the input and priced as such',
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      [ATTR_GEN_AI_PROVIDER_NAME]: GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
      [ATTR_GEN_AI_REQUEST_MODEL]: 'claude-sonnet-4-20250514',
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 10_000,
      [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 8000,
      [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: 1000,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 100,
    },
    model: 'claude-sonnet-4-20250514',
    tool: null,
    tokens: 10_100,
    cost: (1000 * SONNET.input + 8000 * SONNET.read + 1000 * SONNET.write + 100 * SONNET.output) / M,
    tool_calls: 0,
  },
  {
    what: 'pre-1.36 names: gen_ai.system, prompt_tokens and completion_tokens',
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      [ATTR_GEN_AI_SYSTEM]: 'openai',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'gpt-4o',
      [ATTR_GEN_AI_USAGE_PROMPT_TOKENS]: 400,
      [ATTR_GEN_AI_USAGE_COMPLETION_TOKENS]: 50,
    },
    model: 'gpt-4o',
    tool: null,
    tokens: 450,
    cost: (400 * GPT4O.input + 50 * GPT4O.output) / M,
    tool_calls: 0,
  },
  {
    what: 'the newer token names win over the older ones on the same span',
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
      [ATTR_GEN_AI_REQUEST_MODEL]: 'gpt-4o',
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 300,
      [ATTR_GEN_AI_USAGE_PROMPT_TOKENS]: 999,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 30,
      [ATTR_GEN_AI_USAGE_COMPLETION_TOKENS]: 999,
    },
    model: 'gpt-4o',
    tool: null,
    tokens: 330,
    cost: (300 * GPT4O.input + 30 * GPT4O.output) / M,
    tool_calls: 0,
  },
  {
    what: 'an execute_tool span is a tool call of gen_ai.tool.name',
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: 'get_weather',
      [ATTR_ERROR_TYPE]: 'timeout',
    },
    model: null,
    tool: 'get_weather',
    tokens: 0,
    cost: 0,
    tool_calls: 1,
  },
  {
    what: 'an invoke_agent span is neither a model nor a tool call',
    attributes: { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT },
    model: null,
    tool: null,
    tokens: 0,
    cost: 0,
    tool_calls: 0,
  },
  {
    what: 'error.type marks the skill invocation failed',
    attributes: { 'skill.id': 'sk-1', [ATTR_ERROR_TYPE]: 'rate_limited' },
    model: null,
    tool: null,
    tokens: 0,
    cost: 0,
    tool_calls: 0,
    error_rate: 1,
  },
]);

conventionSuite('MCP semantic conventions', 'mcp-server', [
  {
    what: 'a tools/call span is a tool call of gen_ai.tool.name, whatever its session and request id',
    attributes: {
      [ATTR_MCP_METHOD_NAME]: MCP_METHOD_NAME_VALUE_TOOLS_CALL,
      [ATTR_GEN_AI_TOOL_NAME]: 'search_issues',
      [ATTR_MCP_SESSION_ID]: 'mcp-session-1',
      [ATTR_MCP_PROTOCOL_VERSION]: '2025-06-18',
      [ATTR_JSONRPC_REQUEST_ID]: '42',
      [ATTR_ERROR_TYPE]: 'tool_error',
    },
    model: null,
    tool: 'search_issues',
    tokens: 0,
    cost: 0,
    tool_calls: 1,
  },
  {
    what: 'another method is not a tool call',
    attributes: { [ATTR_MCP_METHOD_NAME]: 'tools/list', [ATTR_MCP_SESSION_ID]: 'mcp-session-1' },
    model: null,
    tool: null,
    tokens: 0,
    cost: 0,
    tool_calls: 0,
  },
]);

conventionSuite('OpenInference', 'phoenix-app', [
  {
    what: 'an LLM span: llm.model_name and llm.token_count.*, cached prompt tokens priced apart',
    attributes: {
      [OI.SPAN_KIND]: 'LLM',
      [OI.LLM_PROVIDER]: 'anthropic',
      [OI.LLM_SYSTEM]: 'anthropic',
      [OI.LLM_MODEL_NAME]: 'claude-sonnet-4-20250514',
      [OI.LLM_TOKEN_COUNT_PROMPT]: 5000,
      [OI.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ]: 4000,
      [OI.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_WRITE]: 500,
      [OI.LLM_TOKEN_COUNT_COMPLETION]: 60,
    },
    model: 'claude-sonnet-4-20250514',
    tool: null,
    tokens: 5060,
    cost: (500 * SONNET.input + 4000 * SONNET.read + 500 * SONNET.write + 60 * SONNET.output) / M,
    tool_calls: 0,
  },
  {
    what: 'a TOOL span is a tool call of tool.name',
    attributes: { [OI.SPAN_KIND]: 'TOOL', [OI.TOOL_NAME]: 'lookup_order' },
    model: null,
    tool: 'lookup_order',
    tokens: 0,
    cost: 0,
    tool_calls: 1,
  },
  {
    what: 'AGENT and CHAIN spans are neither',
    attributes: { [OI.SPAN_KIND]: 'CHAIN' },
    model: null,
    tool: null,
    tokens: 0,
    cost: 0,
    tool_calls: 0,
  },
  {
    what: 'OpenTelemetry names win over OpenInference names on the same span',
    attributes: {
      [OI.SPAN_KIND]: 'LLM',
      [OI.LLM_MODEL_NAME]: 'gpt-4o-mini',
      [OI.LLM_TOKEN_COUNT_PROMPT]: 999,
      [ATTR_GEN_AI_REQUEST_MODEL]: 'gpt-4o',
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 100,
    },
    model: 'gpt-4o',
    tool: null,
    tokens: 100,
    cost: (100 * GPT4O.input) / M,
    tool_calls: 0,
  },
]);

conventionSuite('Traceloop (OpenLLMetry), as its MCP instrumentation sends them', 'mcp-agent', [
  {
    what: 'a tool span is a tool call of traceloop.entity.name, an error by its status',
    name: 'search_issues.tool',
    kind: CLIENT,
    attributes: {
      [TL.SPAN_KIND]: 'tool',
      [TL.ENTITY_NAME]: 'search_issues',
      [TL.ENTITY_INPUT]: '{"tool_name":"search_issues","arguments":{"q":"x"}}',
    },
    failed: true,
    model: null,
    tool: 'search_issues',
    tokens: 0,
    cost: 0,
    tool_calls: 1,
  },
  {
    what: 'another kind (session, workflow, task) is neither, and its entity name is no tool',
    name: 'mcp.client.session',
    kind: CLIENT,
    attributes: { [TL.SPAN_KIND]: 'session', [TL.ENTITY_NAME]: 'mcp.client.session' },
    model: null,
    tool: null,
    tokens: 0,
    cost: 0,
    tool_calls: 0,
  },
  {
    what: 'OpenTelemetry names win: a tool span naming gen_ai.tool.name calls that tool',
    attributes: { [TL.SPAN_KIND]: 'tool', [TL.ENTITY_NAME]: 'wrapper', [ATTR_GEN_AI_TOOL_NAME]: 'search_issues' },
    model: null,
    tool: 'search_issues',
    tokens: 0,
    cost: 0,
    tool_calls: 1,
  },
]);

conventionSuite('Claude Code traces (beta)', 'claude-code', [
  {
    what: 'an LLM request: its input excludes the cache tokens, which are added to it',
    name: CC.LLM_REQUEST,
    attributes: {
      model: 'claude-sonnet-4-20250514',
      [ATTR_GEN_AI_SYSTEM]: 'anthropic',
      [ATTR_GEN_AI_REQUEST_MODEL]: 'claude-sonnet-4-20250514',
      input_tokens: 20,
      cache_read_tokens: 30_000,
      cache_creation_tokens: 2000,
      output_tokens: 400,
    },
    model: 'claude-sonnet-4-20250514',
    tool: null,
    tokens: 32_420,
    cost: (20 * SONNET.input + 30_000 * SONNET.read + 2000 * SONNET.write + 400 * SONNET.output) / M,
    tool_calls: 0,
  },
  {
    what: 'a tool span is a tool call of tool_name',
    name: CC.TOOL,
    attributes: { tool_name: 'Bash', duration_ms: 500 },
    failed: true,
    model: null,
    tool: 'Bash',
    tokens: 0,
    cost: 0,
    tool_calls: 1,
  },
  {
    what: 'the interaction span is neither',
    name: CC.INTERACTION,
    attributes: { user_prompt_length: 12 },
    model: null,
    tool: null,
    tokens: 0,
    cost: 0,
    tool_calls: 0,
  },
]);
