/**
 * Harness events on the OTLP logs signal mapped onto the span model (DESIGN §9), so that the
 * statistics answer from the telemetry Claude Code and OpenAI Codex send without any
 * instrumentation. One log record becomes at most one span, with the attributes a traced harness
 * would have set (`gen_ai.*`, `session.id`, …); otlp/traces/mapping.ts then maps and checks it like any
 * span. The table in docs/send-telemetry.md lists every mapped event.
 *
 * - Trace: the record's own trace id when it has one; else Claude Code's `prompt.id` (one trace per
 *   user prompt), else the session (`session.id`, Codex's `conversation.id`), hashed to 16 bytes.
 * - Span id: a hash of the record's name, time and attributes: the same record always has the same
 *   id, so a record sent again is the same span and is stored once (DESIGN §12).
 * - End time: the record's time (events are emitted when the work ends), else its observed time;
 *   start = end − `duration_ms`.
 * - Values arrive as strings as often as numbers (both harnesses); they are read as numbers here.
 */
import { hash } from 'node:crypto';
import { parseWellFormedJson } from '../../shared/well-formed.ts';
import type { DecodedLogRecord } from './decode.ts';
import type { Attributes, AttrValue, DecodedSpan } from '../types.ts';

type Builder = (r: DecodedLogRecord, span: Map<string, AttrValue>) => { name: string; durationMs: number } | null;

const str = (v: AttrValue | undefined): string | null => (v === undefined || v === null || v === '' ? null : String(v));
const num = (v: AttrValue | undefined): number => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : 0;
  return Number.isFinite(n) ? n : 0;
};
/** `"true"`/`"false"` as Claude Code and Codex send them, or real booleans. */
const isFalse = (v: AttrValue | undefined) => v === false || (typeof v === 'string' && v.toLowerCase() === 'false');

/**
 * A JSON-object attribute (Claude Code's `tool_parameters`), or an empty object. Its text may escape
 * a lone surrogate, which JSON.parse would keep: its strings are made well formed, as the body's are.
 */
function jsonObject(v: AttrValue | undefined): Record<string, unknown> {
  if (typeof v !== 'string' || !v.startsWith('{')) return {};
  try {
    const parsed = parseWellFormedJson(v);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
const jsonText = (o: Record<string, unknown>, k: string) => (typeof o[k] === 'string' && o[k] !== '' ? o[k] : null);

function set(span: Map<string, AttrValue>, key: string, value: AttrValue): void {
  if (value !== null && value !== '') span.set(key, value);
}

/** A skill named by the resource (`OTEL_RESOURCE_ATTRIBUTES=skill.name=…`): its prompts are invocations. */
const resourceSkill = (r: DecodedLogRecord) =>
  r.resource.has('skill.id') || r.resource.has('skill.name') || r.resource.has('gen_ai.skill.name');

function toolCall(span: Map<string, AttrValue>, tool: string | null, mcp: string | null, ok: boolean, error: string) {
  span.set('gen_ai.operation.name', 'execute_tool');
  set(span, 'gen_ai.tool.name', tool);
  set(span, 'mcp.server.name', mcp);
  if (!ok) span.set('error.type', error);
}

function prompt(r: DecodedLogRecord, span: Map<string, AttrValue>, command: string | null) {
  set(span, 'command.name', command);
  const skilled = resourceSkill(r);
  if (skilled) span.set('gen_ai.operation.name', 'invoke_skill');
  return { name: skilled ? 'invoke_skill' : 'user_prompt', durationMs: 0 };
}

const CLAUDE: Record<string, Builder> = {
  api_request(r, span) {
    const a = r.attributes;
    span.set('gen_ai.operation.name', 'chat');
    set(span, 'gen_ai.request.model', str(a.get('model')));
    // OpenTelemetry's input_tokens include cached ones; Claude Code counts them apart.
    const input = num(a.get('input_tokens')) + num(a.get('cache_read_tokens')) + num(a.get('cache_creation_tokens'));
    span.set('gen_ai.usage.input_tokens', input);
    span.set('gen_ai.usage.output_tokens', num(a.get('output_tokens')));
    span.set('gen_ai.usage.cache_read.input_tokens', num(a.get('cache_read_tokens')));
    span.set('gen_ai.usage.cache_creation.input_tokens', num(a.get('cache_creation_tokens')));
    if (a.has('cost_usd')) span.set('gen_ai.usage.cost', num(a.get('cost_usd')));
    return { name: 'chat', durationMs: num(a.get('duration_ms')) };
  },
  api_error(r, span) {
    const a = r.attributes;
    span.set('gen_ai.operation.name', 'chat');
    set(span, 'gen_ai.request.model', str(a.get('model')));
    span.set('error.type', str(a.get('status_code')) ?? 'api_error');
    return { name: 'chat', durationMs: num(a.get('duration_ms')) };
  },
  tool_result(r, span) {
    const a = r.attributes;
    const params = jsonObject(a.get('tool_parameters'));
    const tool = jsonText(params, 'mcp_tool_name') ?? str(a.get('tool_name'));
    toolCall(
      span,
      tool,
      jsonText(params, 'mcp_server_name'),
      !isFalse(a.get('success')),
      str(a.get('error_type')) ?? 'tool_error',
    );
    return { name: 'execute_tool', durationMs: num(a.get('duration_ms')) };
  },
  skill_activated(r, span) {
    span.set('gen_ai.operation.name', 'invoke_skill');
    set(span, 'skill.name', str(r.attributes.get('skill.name')));
    return { name: 'invoke_skill', durationMs: 0 };
  },
  user_prompt: (r, span) => prompt(r, span, str(r.attributes.get('command_name'))),
};

const CODEX: Record<string, Builder> = {
  sse_event(r, span) {
    const a = r.attributes;
    const kind = str(a.get('event.kind'));
    if (kind !== 'response.completed' && kind !== 'response.failed') return null;
    span.set('gen_ai.operation.name', 'chat');
    set(span, 'gen_ai.request.model', str(a.get('model')));
    span.set('gen_ai.usage.input_tokens', num(a.get('input_token_count')));
    span.set('gen_ai.usage.output_tokens', num(a.get('output_token_count')));
    // OpenAI's input counts include the cached tokens, as OpenTelemetry's do.
    span.set('gen_ai.usage.cache_read.input_tokens', num(a.get('cached_token_count')));
    if (kind === 'response.failed') span.set('error.type', 'response.failed');
    return { name: 'chat', durationMs: num(a.get('duration_ms')) };
  },
  tool_result(r, span) {
    const a = r.attributes;
    toolCall(span, str(a.get('tool_name')), str(a.get('mcp_server')), !isFalse(a.get('success')), 'tool_error');
    return { name: 'execute_tool', durationMs: num(a.get('duration_ms')) };
  },
  user_prompt: (r, span) => prompt(r, span, null),
};

/** The harness and event a record is, from its body (`claude_code.api_request`) or `event.name`. */
function eventOf(r: DecodedLogRecord): { harness: 'claude_code' | 'codex'; event: string } | null {
  for (const name of [typeof r.body === 'string' ? r.body : null, r.eventName]) {
    const m = name === null ? null : /^(claude_code|codex)\.([a-z_]+)$/.exec(name);
    if (m) return { harness: m[1] as 'claude_code' | 'codex', event: m[2] as string };
  }
  // Claude Code's `event.name` is unprefixed; its service name tells it apart.
  const service = str(r.resource.get('service.name'));
  if (r.eventName !== null && service?.startsWith('claude-code') && /^[a-z_]+$/.test(r.eventName))
    return { harness: 'claude_code', event: r.eventName };
  return null;
}

const hex = (text: string, bytes: number) => hash('sha256', text).slice(0, bytes * 2);

/**
 * A record's identity as text. An empty value is written as null: protobuf decodes an empty
 * AnyValue as '' and JSON its `{}` as null, and a record sent again in the other encoding must be
 * the same span (exactly once).
 */
function recordKey(r: DecodedLogRecord): string {
  const value = (v: AttrValue | undefined) => (v === '' || v === undefined ? null : v);
  const attributes = [...r.attributes].map(([k, v]) => [k, value(v)]);
  return JSON.stringify([value(r.eventName), value(r.body), String(r.timeNs), String(r.observedNs), attributes]);
}

function userOf(a: Attributes, harness: 'claude_code' | 'codex'): string | null {
  return harness === 'claude_code'
    ? (str(a.get('user.account_uuid')) ?? str(a.get('user.id')))
    : str(a.get('user.account_id'));
}

/** The span a harness event stands for, or null for a record that maps to nothing. `traceIds` memoizes trace ids within a batch. */
export function spanOfLogRecord(r: DecodedLogRecord, traceIds: Map<string, string>): DecodedSpan | null {
  const which = eventOf(r);
  if (which === null) return null;
  const build = (which.harness === 'claude_code' ? CLAUDE : CODEX)[which.event];
  const attributes: Attributes = new Map();
  const built = build?.(r, attributes) ?? null;
  if (built === null) return null;
  const a = r.attributes;
  const session = which.harness === 'claude_code' ? str(a.get('session.id')) : str(a.get('conversation.id'));
  set(attributes, 'session.id', session);
  set(attributes, 'user.id', userOf(a, which.harness));
  const end = r.timeNs > 0n ? r.timeNs : r.observedNs;
  // Clamped so that any number converts (1e303 ms would be Infinity ns); otlp/traces/mapping.ts refuses
  // durations past SPAN_MAX_DURATION_S anyway.
  const durationNs = BigInt(Math.round(Math.min(Math.max(0, built.durationMs), 1e12) * 1e6));
  const record = recordKey(r);
  const key = `${which.harness}:${str(a.get('prompt.id')) ?? session ?? record}`;
  let traceId = r.traceId !== '' ? r.traceId : traceIds.get(key);
  if (traceId === undefined) {
    traceId = hex(key, 16);
    traceIds.set(key, traceId);
  }
  return {
    traceId,
    spanId: hex(record, 8),
    parentSpanId: null,
    name: built.name,
    startNs: end - durationNs,
    endNs: end,
    statusCode: 0,
    kind: 0,
    attributes,
    resource: r.resource,
  };
}
